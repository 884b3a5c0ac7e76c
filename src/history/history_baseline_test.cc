#include "history/history_baseline.h"

#include <catch2/catch.hpp>

#include "analyse/fail_on.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_history_baseline_test {

using namespace jobviz;

namespace {

LedgerRun Run(std::int64_t id, double step_us, double bubble, std::string stop = "finished") {
  LedgerRun run;
  run.id = id;
  run.record.name = "nightly";
  run.record.steps = 4;
  run.record.step_us = step_us;
  run.record.bubble = bubble;
  run.record.stop_kind = std::move(stop);
  run.record.what_ifs = {{"no_slow_workers", true, 0.1 * static_cast<double>(id), 10}};
  return run;
}

}  // namespace

TEST_CASE("LEDGER[:K]: K after the last colon when it is a number") {
  CHECK(ParseHistoryBaseline("runs.db")->ledger == "runs.db");
  CHECK(ParseHistoryBaseline("runs.db")->runs == 10);
  CHECK(ParseHistoryBaseline("runs.db:5")->runs == 5);
  CHECK(ParseHistoryBaseline("runs.db:5")->ledger == "runs.db");
  CHECK(ParseHistoryBaseline("c:/a:b/runs.db")->ledger == "c:/a:b/runs.db");  // a colon of the path
  CHECK_FALSE(ParseHistoryBaseline("runs.db:0"));
}

TEST_CASE("The baseline is the median of the last K finished runs, read by the gates as a --baseline") {
  const std::vector<LedgerRun> runs = {Run(1, 100, 0.10), Run(2, 110, 0.20), Run(3, 500, 0.90, "stopped"),
                                       Run(4, 120, 0.30), Run(5, 130, 0.40)};
  std::string described;
  const auto doc = BaselineOfRuns(runs, 3, &described);
  REQUIRE(doc);
  CHECK(described == "the median of 3 runs (#2-#5) of nightly");  // #3 stopped: left out
  CHECK((*doc)["bubble_ratio"].get<double>() == Approx(0.30));
  CHECK((*doc)["what_if"]["no_slow_workers"]["gain"].get<double>() == Approx(0.4));
  std::string error;
  const auto p50 = ResolveMetric(*doc, "steps.duration_us.p50", &error);
  REQUIRE(p50);
  CHECK(*p50 == Approx(120));
  auto condition = ParseCondition("bubble_ratio > baseline + 0.02", &error);
  REQUIRE(condition);
  CHECK(*Threshold(*condition, &*doc, &error) == Approx(0.32));
  CHECK_FALSE(BaselineOfRuns({Run(1, 100, 0.1, "stopped")}, 3, &described));
}

}  // namespace unit_history_baseline_test
