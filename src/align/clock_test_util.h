// What the clock tests share: two machines of one pipeline stage each, one
// clock ahead of the other.
#pragma once

#include <algorithm>
#include <string>

#include "model/model.h"
#include "model/time_value.h"

namespace jobviz::clock_test {

inline constexpr Nanos kUs = 1000, kMs = 1'000'000;

// Two machines, one worker each, a 2-stage pipeline: machine1's forward of
// each micro-batch starts `transfer` after machine0's ends (true time), and
// machine1's clock reads `skew` ahead.
inline Timeline TwoStagePipeline(Nanos skew, Nanos transfer) {
  Timeline t;
  for (int m = 0; m < 2; ++m) {
    t.machines.emplace_back("machine" + std::to_string(m));
    Worker w;
    w.machine = m;
    w.file = "machine" + std::to_string(m) + "/workerlog.0";
    t.machines[m].workers.push_back(w);
  }
  auto& stage0 = t.machines[0].workers[0].jobs;
  auto& stage1 = t.machines[1].workers[0].jobs;
  for (int mb = 0; mb < 4; ++mb) {
    const Nanos f0 = 10 * kMs + mb * 10 * kMs;  // forward on stage 0
    stage0.push_back({"", "forward", mb, f0, f0 + 2 * kMs, 1, kNoStep});
    const Nanos f1 = f0 + 2 * kMs + transfer;   // forward on stage 1
    stage1.push_back({"", "forward", mb, f1 + skew, f1 + 2 * kMs + skew, 1, kNoStep});
    const Nanos b1 = f1 + 2 * kMs;              // backward on stage 1
    stage1.push_back({"", "backward", mb, b1 + skew, b1 + 3 * kMs + skew, 1, kNoStep});
    const Nanos b0 = b1 + 3 * kMs + transfer;   // backward on stage 0
    stage0.push_back({"", "backward", mb, b0, b0 + 3 * kMs, 1, kNoStep});
  }
  for (auto* jobs : {&stage0, &stage1})
    std::sort(jobs->begin(), jobs->end(), [](const Job& a, const Job& b) { return a.start < b.start; });
  return t;
}

}  // namespace jobviz::clock_test
