#include "emit/step_line.h"

#include <catch2/catch.hpp>
#include <map>

#include "analyse/run_simulator.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_step_line_test {

using namespace jobviz;
using namespace jobviz::sim;


TEST_CASE("A step's line reads time, bubble against the ideal, the top cause and the slow workers") {
  StepReport r;
  r.span = {41, 1'000'000'000, 1'031'020'000, false};
  r.bubble_ratio = 0.298;
  r.ideal_bubble = 0.273;
  r.top_cause = Cause{WhatIfKind::kBalancedStages, "stage 2 is the bottleneck", 3'846'000, 0.124};
  r.cause_label = "stage 2";
  r.slow_workers = {{"machine2 worker 5", 1.31}};
  CHECK(StepLine(r) == "step 41  31.02 ms  bubble 29.8% (ideal 27.3%)  top cause: stage 2 (-12.4%)  slow: machine2 worker 5 1.31x");
  r.top_cause.reset();
  r.ideal_bubble.reset();
  r.slow_workers = {{"a", 1.5}, {"b", 1.4}, {"c", 1.3}, {"d", 1.2}, {"e", 1.1}};
  CHECK(StepLine(r) == "step 41  31.02 ms  bubble 29.8%  top cause: none  slow: a 1.50x, b 1.40x, c 1.30x and 2 more");
}

TEST_CASE("A step's JSON has the summary's step fields and the step's analysis") {
  SimRun run;
  run.stage_factor[1] = 1.4;
  const std::vector<StepReport> reports = AnalyseSteps(WithSteps(Simulate(run)), 0, 1, 1);
  REQUIRE(reports.size() == 1);
  const nlohmann::json j = StepJson(reports[0]);
  for (const char* key : {"step", "start_us", "end_us", "start_ns", "end_ns", "duration_us", "jobs", "bubble_ratio",
                          "ideal_bubble_ratio", "top_cause", "slow_workers"})
    CHECK(j.contains(key));
  CHECK(j["end_ns"].get<std::int64_t>() - j["start_ns"].get<std::int64_t>() == reports[0].span.end - reports[0].span.start);
  CHECK(j["top_cause"]["what_if"] == "balanced_stages");
  CHECK(j["top_cause"]["label"] == "stage 1");
  CHECK(j["slow_workers"].is_array());
}

}  // namespace unit_step_line_test
