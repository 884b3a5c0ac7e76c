#include "model/step_window.h"

#include <catch2/catch.hpp>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_step_window_test {

using namespace jobviz;

namespace {
Timeline ThreeSteps() {
  Timeline t;
  t.machines.emplace_back("m");
  Worker w;
  for (std::int64_t step = 0; step < 3; ++step) {
    w.jobs.push_back({"0", "forward", 0, step * 100, step * 100 + 10, 1, step});
    w.steps.push_back({step, step * 100, step * 100 + 10});
    t.steps.push_back({step, step * 100, step * 100 + 10});
  }
  t.machines[0].workers.push_back(w);
  return t;
}
}  // namespace

TEST_CASE("--steps: FIRST:LAST, open ends, one step; refused otherwise") {
  std::string error;
  CHECK(ParseStepRange("3:5", &error)->first == 3);
  CHECK(ParseStepRange("3:5", &error)->last == 5);
  CHECK(ParseStepRange("3:", &error)->last == INT64_MAX);
  CHECK(ParseStepRange(":5", &error)->first == INT64_MIN);
  CHECK(ParseStepRange("4", &error)->Contains(4));
  CHECK_FALSE(ParseStepRange("4", &error)->Contains(5));
  for (const char* bad : {"", ":", "5:3", "a:b", "-1:2", "1:2:3", "1.5"}) {
    INFO(bad);
    CHECK_FALSE(ParseStepRange(bad, &error));
  }
}

TEST_CASE("--steps leaves out jobs in no step whichever way the window is written, and counts them") {
  for (const char* window : {":1", "0:1"}) {
    INFO(window);
    Timeline t = ThreeSteps();
    t.machines[0].workers[0].jobs.insert(t.machines[0].workers[0].jobs.begin(), {"9", "forward", 0, -50, -40, 1, kNoStep});
    std::string error;
    size_t outside = 0;
    REQUIRE(KeepSteps(*ParseStepRange(window, &error), t, &error, &outside));
    CHECK(t.machines[0].workers[0].jobs.size() == 2);
    CHECK(outside == 1);
  }
}

TEST_CASE("--steps keeps the window's jobs and steps, and says what there is when nothing is left") {
  Timeline t = ThreeSteps();
  std::string error;
  REQUIRE(KeepSteps(*ParseStepRange("1:", &error), t, &error));
  CHECK(t.steps.size() == 2);
  CHECK(t.steps.front().step == 1);
  CHECK(t.machines[0].workers[0].jobs.size() == 2);
  CHECK(t.machines[0].workers[0].steps.size() == 2);
  Timeline u = ThreeSteps();
  CHECK_FALSE(KeepSteps(*ParseStepRange("7:9", &error), u, &error));
  CHECK(error == "no job in the steps asked for: the logs have step0 to step2");
  Timeline none;
  CHECK_FALSE(KeepSteps(*ParseStepRange("1", &error), none, &error));
}

TEST_CASE("CopyJobsWhere copies the kept jobs and only their steps, leaving the original as it was") {
  const Timeline t = ThreeSteps();
  const Timeline copy = CopyJobsWhere(t, [](const Job& job) { return job.step != 1; });
  REQUIRE(copy.machines.size() == 1);
  CHECK(copy.machines[0].name == "m");
  REQUIRE(copy.machines[0].workers[0].jobs.size() == 2);
  CHECK(copy.machines[0].workers[0].jobs[1].step == 2);
  REQUIRE(copy.steps.size() == 2);
  CHECK(copy.steps[0].step == 0);
  CHECK(copy.steps[1].step == 2);
  CHECK(copy.machines[0].workers[0].steps.size() == 2);
  CHECK(t.machines[0].workers[0].jobs.size() == 3);
}

TEST_CASE("SliceSteps: each step its own timeline with its jobs, and its first line in each log") {
  Timeline t;
  t.machines.emplace_back("m");
  for (int index = 0; index < 2; ++index) {
    Worker w;
    w.index = index;
    w.file = "m/workerlog." + std::to_string(index);
    // Lines out of time order within a step: the first line is the smallest.
    for (std::int64_t step = 0; step < 3; ++step) {
      w.jobs.push_back({"0", "forward", 0, step * 100 + 5, step * 100 + 9, static_cast<std::uint64_t>(10 * step + 7 + index), step});
      w.jobs.push_back({"1", "forward", 0, step * 100, step * 100 + 4, static_cast<std::uint64_t>(10 * step + 3 + index), step});
    }
    t.machines[0].workers.push_back(w);
  }
  for (std::int64_t step = 0; step < 3; ++step) t.steps.push_back({step, step * 100, step * 100 + 10});
  const std::vector<StepSlice> slices = SliceSteps(t, 1, 9);  // last beyond the steps: up to the end
  REQUIRE(slices.size() == 2);
  for (size_t i = 0; i < slices.size(); ++i) {
    const std::int64_t step = static_cast<std::int64_t>(i) + 1;
    const Timeline& one = slices[i].one;
    REQUIRE(one.steps.size() == 1);
    CHECK(one.steps[0].step == step);
    REQUIRE(one.machines.size() == 1);
    REQUIRE(one.machines[0].workers.size() == 2);
    for (const Worker& w : one.machines[0].workers) {
      REQUIRE(w.jobs.size() == 2);
      for (const Job& job : w.jobs) CHECK(job.step == step);
    }
    const std::vector<std::pair<std::string, std::uint64_t>> expected = {
        {"m/workerlog.0", static_cast<std::uint64_t>(10 * step + 3)}, {"m/workerlog.1", static_cast<std::uint64_t>(10 * step + 4)}};
    CHECK(slices[i].first_lines == expected);
  }
  CHECK(SliceSteps(t, 2, 2).empty());
  CHECK(SliceSteps(t, 3, 5).empty());
}

}  // namespace unit_step_window_test
