#include "analyse/cause_text.h"

#include <catch2/catch.hpp>

using namespace jobviz;

namespace {

// A run whose top cause is `kind`, saving 5.04 ms of a 50.4 ms step (10%).
Bottleneck TopCause(WhatIfKind kind) {
  Bottleneck b;
  b.ran = true;
  b.steps = 4;
  b.step_gap = 2'000'000;
  for (int k = 0; k < static_cast<int>(WhatIfKind::kCount); ++k) {
    WhatIf w;
    w.kind = static_cast<WhatIfKind>(k);
    b.what_if.push_back(w);
  }
  WhatIf& w = b.what_if[static_cast<size_t>(kind)];
  w.applies = true;
  w.saved = 5'040'000;
  w.gain = 0.1;
  b.causes.push_back({kind, "", w.saved, w.gain});
  return b;
}

SlowWorker Slow(const std::string& name) {
  SlowWorker w;
  w.name = name;
  w.compared_with = "its tensor-parallel peers";
  w.factor = 1.3;
  return w;
}

}  // namespace

TEST_CASE("Each cause's verdict is one sentence that reads") {
  const std::vector<SlowWorker> one = {Slow("machine1 worker 3")}, two = {Slow("machine1 worker 3"), Slow("machine2 worker 0")};
  CauseFacts facts;
  facts.slow_workers = &two;
  const std::string slow = PlainVerdict(TopCause(WhatIfKind::kNoSlowWorkers), facts, 0.5, nullptr);
  CHECK(slow == "machine1 worker 3 runs its jobs 1.30x slower than its tensor-parallel peers (and 1 more worker is slow): "
                "check that GPU and its host (clocks, temperature, other processes); at their peers' speed, each step "
                "would be about 5.04 ms (10%) shorter.");
  const std::string outliers = PlainVerdict(TopCause(WhatIfKind::kNoOutliers), facts, 0.5, nullptr);
  CHECK(outliers.find("retried collectives), each step would be about 5.04 ms (10%) shorter.") != std::string::npos);
  // The gap and its share of the run: not gap x (steps - 1) / steps, which moves with the step count.
  const std::string gaps = PlainVerdict(TopCause(WhatIfKind::kNoStepGaps), facts, 0.5, nullptr);
  CHECK(gaps == "Nothing runs for 2.00 ms between steps, 10% of the run: time outside the pipeline (data loading, "
                "host work, logging, checkpoints).");
  for (const std::string& text : {slow, outliers, gaps}) {
    CHECK(text.find("each step cut") == std::string::npos);
    CHECK(text.find("step cut each step") == std::string::npos);
  }
  // What the replay changed: one slow worker at its peers' speed; two, each at theirs.
  const Bottleneck b = TopCause(WhatIfKind::kNoSlowWorkers);
  CHECK(ChangeText(WhatIfKind::kNoSlowWorkers, facts, b) == "2 slow workers, each at the speed of its tensor-parallel peers");
  facts.slow_workers = &one;
  CHECK(ChangeText(WhatIfKind::kNoSlowWorkers, facts, b) == "1 slow worker at the speed of its tensor-parallel peers");
}
