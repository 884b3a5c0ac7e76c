#include "history/run_history.h"

#include <catch2/catch.hpp>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_run_history_test {

using namespace jobviz;

namespace {

LedgerRun Run(std::int64_t id, const std::string& name, double step_us, double bubble, std::string stop = "finished") {
  LedgerRun run;
  run.id = id;
  run.record.name = name;
  run.record.steps = 10;
  run.record.step_us = step_us;
  run.record.bubble = bubble;
  run.record.stop_kind = std::move(stop);
  return run;
}

}  // namespace

TEST_CASE("Each run is held against the median of the runs of its name before it") {
  std::vector<LedgerRun> runs = {Run(1, "a", 100, 0.20), Run(2, "a", 104, 0.21), Run(3, "b", 500, 0.50),
                                 Run(4, "a", 102, 0.20), Run(5, "a", 110, 0.20), Run(6, "a", 103, 0.25)};
  const std::vector<HistoryLine> lines = CompareRuns(runs, {});
  REQUIRE(lines.size() == 6);
  CHECK(lines[0].before == 0);
  CHECK_FALSE(lines[0].step_change);
  CHECK(lines[2].before == 0);  // b: no earlier b
  CHECK(lines[3].before == 2);  // a's 100 and 104, not b's 500
  CHECK(*lines[3].median_step_us == Approx(102));
  CHECK_FALSE(lines[3].step_regressed);
  CHECK(*lines[4].median_step_us == Approx(102));  // 100, 102, 104
  CHECK(*lines[4].step_change == Approx(8.0 / 102));
  CHECK(lines[4].step_regressed);  // +7.8% > 5%
  CHECK(*lines[5].bubble_change == Approx(0.05));
  CHECK(lines[5].bubble_regressed);  // +5 pt > 2 pt
  CHECK_FALSE(lines[5].step_regressed);
}

TEST_CASE("Runs that stopped are neither a median's nor a regression") {
  std::vector<LedgerRun> runs = {Run(1, "a", 100, 0.2), Run(2, "a", 40, 0.6, "stopped"), Run(3, "a", 100, 0.2),
                                 Run(4, "a", 300, 0.2, "hang")};
  const std::vector<HistoryLine> lines = CompareRuns(runs, {});
  CHECK(lines[2].before == 1);  // the stopped run is left out
  CHECK(*lines[2].median_step_us == Approx(100));
  CHECK(lines[3].stopped);
  CHECK_FALSE(lines[3].step_regressed);
}

TEST_CASE("--last shows the latest runs, --compare bounds the runs a median is taken over") {
  std::vector<LedgerRun> runs;
  for (int i = 0; i < 30; ++i) runs.push_back(Run(i + 1, "a", i < 25 ? 100 : 200, 0.2));
  HistoryOptions options;
  options.last = 5;
  options.compare = 3;
  const std::vector<HistoryLine> lines = CompareRuns(runs, options);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0].run->id == 26);
  CHECK(lines[0].step_regressed);
  CHECK(lines[0].before == 3);
  CHECK(*lines[3].median_step_us == Approx(200));  // runs 26-28: the change is the new normal
  CHECK_FALSE(lines[3].step_regressed);
}

TEST_CASE("A running median agrees with Median at every count, values in any order and repeated") {
  RunningMedian running;
  std::vector<double> values;
  CHECK(running.median() == 0);
  std::uint64_t x = 12345;
  for (int i = 0; i < 500; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const double value = static_cast<double>((x >> 33) % 50);  // repeats, and runs up and down
    running.Add(value);
    values.push_back(value);
    REQUIRE(running.median() == Median(values));
  }
}

}  // namespace unit_run_history_test
