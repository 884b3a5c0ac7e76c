// Where workers sit when no line or option says it, from the jobs alone:
// - tensor-parallel peers run the same jobs in lockstep (same type and
//   micro-batch sequence, starts and ends within a small tolerance) on one
//   machine;
// - a 1F1B pipeline's stage s runs min(m, p - s) forwards before its first
//   backward, so the warm-up count names the stage; peer groups with the same
//   count are the same stage of different replicas.
// Says what it found and how sure it is; leaves the roles unknown (every
// worker its own stage) when the jobs do not show a structure.
#pragma once

#include <string>
#include <vector>

#include "model/model.h"

namespace jobviz {

// Fills Timeline::topology (source kInferred, with a detail saying what the
// inference rests on) and the workers' roles, or leaves them as they are.
// Machines are compared on up to `threads` threads (0: one per core).
void InferTopology(Timeline* timeline, int threads = 1);

// True when two workers' jobs run in lockstep (exposed for tests).
bool InLockstep(const Worker& a, const Worker& b);

}  // namespace jobviz
