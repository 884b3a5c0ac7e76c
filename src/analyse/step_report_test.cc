#include "analyse/step_report.h"

#include <catch2/catch.hpp>
#include <map>

#include "analyse/analysis.h"
#include "analyse/run_simulator.h"
#include "model/step_window.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_step_report_test {

using namespace jobviz;
using namespace jobviz::sim;

namespace {


// The batch analysis of step `s` alone: what a report of that step must equal.
Analysis BatchOfStep(const Timeline& timeline, std::int64_t step) {
  Timeline one = timeline;
  std::string error;
  REQUIRE(KeepSteps({step, step}, one, &error));
  return Analyze(one, 1);
}

}  // namespace

TEST_CASE("Each step is analysed alone, with the figures of a batch run over that step") {
  SimRun run;
  run.stage_factor[2] = 1.3;
  const Timeline t = WithSteps(Simulate(run));
  REQUIRE(t.steps.size() == 4);
  const std::vector<StepReport> reports = AnalyseSteps(t, 1, 4, 2);
  REQUIRE(reports.size() == 3);
  for (size_t i = 0; i < reports.size(); ++i) {
    const StepReport& r = reports[i];
    CHECK(r.span.step == t.steps[i + 1].step);
    const Analysis batch = BatchOfStep(t, r.span.step);
    CHECK(r.bubble_ratio == Approx(batch.bubble_ratio).epsilon(1e-12));
    REQUIRE(r.top_cause);
    REQUIRE_FALSE(batch.bottleneck.causes.empty());
    CHECK(r.top_cause->kind == batch.bottleneck.causes.front().kind);
    CHECK(r.top_cause->gain == Approx(batch.bottleneck.causes.front().gain).epsilon(1e-12));
    CHECK(r.top_cause->kind == WhatIfKind::kBalancedStages);
    CHECK(r.cause_label == "stage 2");
    CHECK(r.ideal_bubble.has_value());
    CHECK(r.jobs == CountJobs([&] {
            Timeline one = t;
            std::string error;
            KeepSteps({r.span.step, r.span.step}, one, &error);
            return one;
          }()));
  }
}

TEST_CASE("A worker slower than its peers is named, slowest first") {
  SimRun run;
  run.worker_factor[{1, 2, 0}] = 1.35;
  run.worker_factor[{0, 1, 1}] = 1.15;
  const Timeline t = WithSteps(Simulate(run));
  const std::vector<StepReport> reports = AnalyseSteps(t, 0, t.steps.size(), 1);
  REQUIRE(reports.size() == t.steps.size());
  for (const StepReport& r : reports) {
    REQUIRE(r.slow_workers.size() >= 1);
    CHECK(r.slow_workers.front().factor > 1.2);
    for (size_t i = 1; i < r.slow_workers.size(); ++i) CHECK(r.slow_workers[i - 1].factor >= r.slow_workers[i].factor);
  }
}

TEST_CASE("A clean run's steps have no cause and no slow worker; an empty range reports nothing") {
  const Timeline t = WithSteps(Simulate({}));
  for (const StepReport& r : AnalyseSteps(t, 0, t.steps.size(), 2)) {
    CHECK_FALSE(r.top_cause);
    CHECK(r.cause_label.empty());
    CHECK(r.slow_workers.empty());
  }
  CHECK(AnalyseSteps(t, 2, 2, 1).empty());
  CHECK(AnalyseSteps(t, 3, 99, 1).size() == 1);
}

TEST_CASE("Cause labels name what a what-if removes") {
  CHECK(CauseLabel(WhatIfKind::kBalancedStages, 3) == "stage 3");
  CHECK(CauseLabel(WhatIfKind::kFreeHandOffs, -1) == "hand-offs");
  CHECK(CauseLabel(WhatIfKind::kNoSlowWorkers, -1) == "slow workers");
}

}  // namespace unit_step_report_test
