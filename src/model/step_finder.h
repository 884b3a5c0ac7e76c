// Decides which step every job belongs to and where each step begins and
// ends, from NVTX step lines when a worker has them, otherwise from the
// original tool's heuristic (docs/workerlog-format.md, "Steps").
#pragma once

#include "model/model.h"

namespace jobviz {

struct StepFinding {
  SkipTally skipped;  // unmatched NVTX pops
  std::vector<std::string> warnings;
};

// Fills Job::step, Worker::steps, Timeline::steps and Timeline::step_source.
StepFinding FindSteps(Timeline& timeline);

}  // namespace jobviz
