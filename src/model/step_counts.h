// A worker's jobs of each step, counted by type: what the unfinished-step
// rules (model/unfinished_steps.h) compare across workers. A step's count
// of a type is how many distinct micro-batches ran it (a line printed
// twice is one job run once).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/model.h"

namespace jobviz {

// A worker's jobs of one step, counted by type: a run has a handful of types.
struct TypeCount {
  std::uint32_t type = 0, count = 0;  // Name::index
  bool pass = false;                  // a forward or backward pass (CountsAsPass)
  bool backward = false;              // a backward pass of some kind
};
struct StepCounts {
  std::int64_t step = kNoStep;
  size_t jobs = 0;
  std::vector<TypeCount> types;
  // Micro-batches run forward and not backward by a backward type the step
  // has (forward0 against backward0, backward_b0 and backward_w0): every
  // micro-batch goes both ways, so a step short of that is unfinished
  // however alike every worker left it.
  size_t missing_backwards = 0;
  std::uint32_t Count(std::uint32_t type) const {
    for (const TypeCount& t : types)
      if (t.type == type) return t.count;
    return 0;
  }
};

// The worker's steps in step order (Job::step must be set; jobs of no step
// are left out).
std::vector<StepCounts> CountByStep(const Worker& worker);

}  // namespace jobviz
