// What is slow in a run, and against what: a worker slower than its
// tensor-parallel peers and replicas, a stage slower than the other stages
// for the same jobs, a job far slower than its worker's others of its type.
// analyse/speeds.h measures them; docs/analysis.md defines them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/time_value.h"

namespace jobviz {

struct SlowJobType {
  std::string type;
  double factor = 1;          // its median duration over the reference's
  size_t slower = 0, jobs = 0;  // jobs more than half kSlowFactor slower than the reference, of jobs compared
};
struct SlowWorker {
  int machine = 0, worker = 0;
  std::string name;
  WorkerRole role;
  std::string compared_with;  // "its tensor-parallel peers", "the other replicas", "its peers and the other replicas"
  double factor = 1;          // the largest of its types'
  std::vector<SlowJobType> types;
};
// A job far slower than its worker's other jobs of its type: more than
// kOutlierFactor times their median (a hiccup: a page fault storm, a
// preempted host thread, a retried collective).
inline constexpr double kOutlierFactor = 1.5;
struct OutlierJob {
  std::string worker;      // "machine2 worker 5"
  std::int64_t step = kNoStep;
  std::string type;
  std::int64_t micro_batch = 0;
  Nanos duration = 0, median = 0;  // the job's, and its worker's median of the type
};

// A stage whose jobs take longer than the other stages' jobs of the same
// types (its slow workers left out): an unbalanced split, fixed by moving
// layers, where a slow worker is a bad GPU or host.
struct SlowStage {
  int stage = 0;
  double factor = 1;  // its job time over the same jobs at the other stages' median speed
};
// A worker is slow when a job type's median is this much above its
// reference's, with at least kSlowConsistency of its jobs of that type
// more than half that much above (a steady slowdown, not a few outliers).
// A stage is slow when its job time is this much above the other stages'.
// Measured against randomized runs (tools/eval_why.cc, docs/analysis.md).
inline constexpr double kSlowFactor = 1.07;
inline constexpr double kSlowConsistency = 0.75;

}  // namespace jobviz
