#include "emit/html_shown.h"

#include <catch2/catch.hpp>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_html_shown_test {

using namespace jobviz;

namespace {

constexpr Nanos kT = 1'000'000'000;

// One worker, two steps of two jobs; each step's span reaches 10 ns past
// its jobs at both ends (an NVTX push before the first, a pop after the last).
Timeline TwoSteps() {
  Timeline t;
  t.machines.emplace_back("machine0");
  Worker w;
  w.file = "m/workerlog.0";
  w.jobs.push_back({"0", "forward", 0, kT + 0, kT + 100, 1, 0});
  w.jobs.push_back({"1", "backward", 0, kT + 200, kT + 300, 2, 0});
  w.jobs.push_back({"2", "forward", 0, kT + 1000, kT + 1100, 3, 1});
  w.jobs.push_back({"3", "backward", 0, kT + 1200, kT + 1300, 4, 1});
  t.steps.push_back({0, kT - 10, kT + 310});
  t.steps.push_back({1, kT + 990, kT + 1310});
  t.machines[0].workers.push_back(w);
  return t;
}

Bottleneck Replay(std::vector<ReplayedJob> jobs) {
  Bottleneck b;
  b.ran = true;
  b.drawn_what_if.emplace();
  b.drawn_what_if->jobs.push_back(std::move(jobs));
  return b;
}

}  // namespace

TEST_CASE("The what-if's steps move as their jobs moved, their margins kept") {
  const Timeline t = TwoSteps();
  // Step 0's gap closed (its backward 50 ns earlier); step 1 starts 150 ns
  // earlier, its backward 250 ns earlier.
  const Bottleneck b = Replay({{0, kT + 0, kT + 100}, {1, kT + 150, kT + 250},
                               {2, kT + 850, kT + 950}, {3, kT + 950, kT + 1050}});
  const ShownWhatIf shown = MapWhatIf(t, OriginalIndices(t, {}), b);
  REQUIRE(shown.steps.size() == 2);
  CHECK(shown.steps[0] == std::pair<Nanos, Nanos>{kT - 10, kT + 260});
  CHECK(shown.steps[1] == std::pair<Nanos, Nanos>{kT + 840, kT + 1060});
  CHECK(shown.times[0][3] == std::pair<Nanos, Nanos>{kT + 950, kT + 1050});
}

TEST_CASE("A step none of whose jobs the replay moved stays where it was measured") {
  const Timeline t = TwoSteps();
  const Bottleneck b = Replay({{0, kT + 0, kT + 100}, {1, kT + 150, kT + 250}});
  const ShownWhatIf shown = MapWhatIf(t, OriginalIndices(t, {}), b);
  REQUIRE(shown.steps.size() == 2);
  CHECK(shown.steps[0] == std::pair<Nanos, Nanos>{kT - 10, kT + 260});
  CHECK(shown.steps[1] == std::pair<Nanos, Nanos>{kT + 990, kT + 1310});
  CHECK(shown.times[0][2] == std::pair<Nanos, Nanos>{-1, -1});
}

TEST_CASE("In a window of later steps the replay's steps shift with its jobs to where the first was measured") {
  const Timeline whole = TwoSteps();
  const auto keep = [](const Job& job) { return job.step == 1; };
  Timeline shown_run = whole;
  shown_run.steps.erase(shown_run.steps.begin());
  auto& jobs = shown_run.machines[0].workers[0].jobs;
  jobs.erase(jobs.begin(), jobs.begin() + 2);
  // The whole run's replay has step 1 500 ns earlier; in the window its first job starts where measured.
  const Bottleneck b = Replay({{0, kT + 0, kT + 100}, {1, kT + 150, kT + 250},
                               {2, kT + 500, kT + 600}, {3, kT + 620, kT + 720}});
  const ShownWhatIf shown = MapWhatIf(shown_run, OriginalIndices(whole, keep), b);
  REQUIRE(shown.steps.size() == 1);
  CHECK(shown.times[0][0] == std::pair<Nanos, Nanos>{kT + 1000, kT + 1100});
  CHECK(shown.times[0][1] == std::pair<Nanos, Nanos>{kT + 1120, kT + 1220});
  CHECK(shown.steps[0] == std::pair<Nanos, Nanos>{kT + 990, kT + 1230});
}

}  // namespace unit_html_shown_test
