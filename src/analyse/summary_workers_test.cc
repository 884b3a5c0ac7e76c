#include "analyse/summary_workers.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "analyse/fail_on.h"
#include "analyse/run_simulator.h"
#include "analyse/summary.h"
#include "analyse/summary_diff.h"

namespace unit_summary_workers_test {

using namespace jobviz;
using jobviz::sim::SimRun;
using jobviz::sim::Simulate;

// pp4 x mp2 x dp3: 24 workers, one of them (replica 1, stage 2, peer 1) slow.
struct Folded {
  Timeline timeline;
  Analysis analysis;
  nlohmann::json all, folded;
  Folded() {
    SimRun run;
    run.dp = 3;
    run.worker_factor[{1, 2, 1}] = 1.4;
    timeline = Simulate(run);
    analysis = Analyze(timeline, 2);
    all = SummaryJson(analysis, timeline, {}, WorkerListing::kAll);
    folded = SummaryJson(analysis, timeline, {}, WorkerListing::kFolded);
  }
};

std::set<std::string> Names(const nlohmann::json& workers) {
  std::set<std::string> names;
  for (const auto& w : workers) names.insert(w["name"].get<std::string>());
  return names;
}

TEST_CASE("Workers are listed up to kListedWorkers, folded past it, or as --summary-workers says") {
  CHECK_FALSE(FoldsWorkers(WorkerListing::kAuto, kListedWorkers));
  CHECK(FoldsWorkers(WorkerListing::kAuto, kListedWorkers + 1));
  CHECK_FALSE(FoldsWorkers(WorkerListing::kAll, 1'000'000));
  CHECK(FoldsWorkers(WorkerListing::kFolded, 1));
  const Folded f;
  CHECK(f.all["workers"].size() == 24);
  CHECK_FALSE(f.all.contains("workers_folded"));
  CHECK(SummaryWorkerCount(f.all) == 24);
  CHECK(SummaryJson(f.analysis, f.timeline, {}) == f.all);  // 24 workers: auto lists them
  CHECK(SummaryWorkerCount(f.folded) == 24);
  CHECK(SummaryFoldsWorkers(f.folded));
}

TEST_CASE("A folded summary: every stage's and replica's spread, and the workers worth naming listed in full") {
  const Folded f;
  const nlohmann::json& folded = f.folded["workers_folded"];
  REQUIRE(folded["by_stage"].size() == 4);
  REQUIRE(folded["by_replica"].size() == 3);
  for (const auto& stage : folded["by_stage"]) CHECK(stage["workers"] == 6);
  for (const auto& replica : folded["by_replica"]) CHECK(replica["workers"] == 8);
  // Each spread is the one of the listed-in-full workers of that stage.
  for (const auto& fold : folded["by_stage"]) {
    std::vector<double> bubbles;
    for (const auto& w : f.all["workers"])
      if (w["stage"] == fold["stage"]) bubbles.push_back(w["bubble_ratio"].get<double>());
    std::sort(bubbles.begin(), bubbles.end());
    CHECK(fold["bubble_ratio"]["min"].get<double>() == bubbles.front());
    CHECK(fold["bubble_ratio"]["max"].get<double>() == bubbles.back());
    CHECK(fold["bubble_ratio"]["p50"].get<double>() == bubbles[PercentileIndex(bubbles.size(), 50)]);
    CHECK(fold["speed"]["min"].get<double>() <= fold["speed"]["max"].get<double>());
  }
  // Listed: the slow worker, and each stage's most and least idle, exactly as the full list has them.
  const std::set<std::string> listed = Names(f.folded["workers"]);
  CHECK(f.folded["workers_folded"]["listed"] == listed.size());
  CHECK(listed.size() < 24);
  REQUIRE(f.folded["slow_workers"].size() == 1);
  CHECK(listed.count(f.folded["slow_workers"][0]["name"].get<std::string>()) == 1);
  for (const auto& fold : folded["by_stage"])
    for (const char* end : {"most_idle", "least_idle"}) CHECK(listed.count(fold[end].get<std::string>()) == 1);
  for (const auto& w : f.folded["workers"]) {
    const auto full = std::find_if(f.all["workers"].begin(), f.all["workers"].end(), [&](const auto& x) { return x["name"] == w["name"]; });
    REQUIRE(full != f.all["workers"].end());
    CHECK(*full == w);
  }
  // The rest of the document is the same.
  nlohmann::json rest = f.folded;
  rest.erase("workers_folded");
  rest["workers"] = f.all["workers"];
  CHECK(rest == f.all);
}

TEST_CASE("Gates on a folded summary: min and max are the run's; other aggregates and unlisted workers say why not") {
  const Folded f;
  std::string error;
  for (const char* path : {"workers.bubble_ratio.max", "workers.bubble_ratio.min"}) {
    INFO(path);
    CHECK(ResolveMetric(f.folded, path, &error) == ResolveMetric(f.all, path, &error));
  }
  CHECK_FALSE(ResolveMetric(f.folded, "workers.bubble_ratio.mean", &error));
  CHECK(error.find("folds its 24 workers") != std::string::npos);
  CHECK(error.find("--summary-workers all") != std::string::npos);
  const std::set<std::string> listed = Names(f.folded["workers"]);
  std::string unlisted;
  for (const auto& w : f.all["workers"])
    if (!listed.count(w["name"].get<std::string>())) unlisted = w["name"].get<std::string>();
  REQUIRE_FALSE(unlisted.empty());
  const std::string path = "workers[" + GateKey(unlisted) + "].bubble_ratio";
  CHECK(ResolveMetric(f.all, path, &error));
  CHECK_FALSE(ResolveMetric(f.folded, path, &error));
  CHECK(error.find("--summary-workers all") != std::string::npos);
  // The folded keys are in the schema: a gate on them is checked before any log is read.
  CHECK(CheckMetricPath(SummarySchema(), "workers_folded.by_stage[2].bubble_ratio.max", &error));
  CHECK(ResolveMetric(f.folded, "workers_folded.by_stage[2].bubble_ratio.max", &error).has_value());
}

TEST_CASE("The diff of a folded summary compares the workers both list, and no worker comes or goes") {
  const Folded f;
  CHECK(ConfigurationChanges(f.all, f.folded).empty());
  size_t worker_rows = 0;
  for (const MetricChange& row : DiffSummaries(f.all, f.folded)) {
    if (row.metric.rfind("workers[", 0) != 0) continue;
    ++worker_rows;
    CHECK(row.base.has_value());
    CHECK(row.now.has_value());
  }
  CHECK(worker_rows == f.folded["workers"].size());
}

TEST_CASE("Each step has the bubble of all its workers, which the folded summary keeps") {
  const Folded f;
  REQUIRE(f.folded["steps"].size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    double busy = 0, idle = 0;
    for (const auto& w : f.all["workers"]) {
      busy += w["steps"][i]["busy_us"].get<double>();
      idle += w["steps"][i]["idle_us"].get<double>();
    }
    CHECK(f.folded["steps"][i]["bubble_ratio"].get<double>() == Approx(idle / (busy + idle)));
  }
}

}  // namespace unit_summary_workers_test
