// Decides which step every job belongs to and where each step begins and
// ends, from NVTX step lines when a worker has them, otherwise from the
// original tool's heuristic (docs/workerlog-format.md, "Steps").
#pragma once

#include "model/model.h"

namespace jobviz {

// The start of the warning when workers found different numbers of steps.
inline constexpr const char* kDifferentStepCounts = "workers found different numbers of steps";

struct StepFinding {
  SkipTally skipped;  // unmatched NVTX pops
  std::vector<std::string> warnings;
};

// Fills Job::step, Worker::steps, Timeline::steps and Timeline::step_source.
// Workers are gone through on up to `threads` threads (0: one per core).
StepFinding FindSteps(Timeline& timeline, int threads = 1);

}  // namespace jobviz
