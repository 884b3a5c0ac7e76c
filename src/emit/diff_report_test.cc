#include "emit/diff_report.h"

#include <catch2/catch.hpp>
#include <string>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_diff_report_test {

using namespace jobviz;

namespace {

nlohmann::json Summary(double step_us) {
  nlohmann::json s = {{"steps", {{"duration_us", {{"p50", step_us}}}}}, {"workers", nlohmann::json::array()}};
  for (int w = 0; w < 1000; ++w)
    s["workers"].push_back({{"name", "m" + std::to_string(w / 8) + " worker " + std::to_string(w % 8)}, {"machine", w / 8},
                            {"worker", w % 8}, {"bubble_ratio", 0.3}});
  return s;
}

}  // namespace

TEST_CASE("The diff's first line is its verdict, in every format but JSON, where it is a field") {
  const nlohmann::json base = Summary(30000), now = Summary(36000);
  const std::vector<MetricChange> rows = DiffSummaries(base, now);
  CHECK(DiffReport(rows, "a.json", "b.json", DiffFormat::kTable).rfind("step time +20.0% (30.00 ms -> 36.00 ms)\n", 0) == 0);
  CHECK(DiffReport(rows, "a.json", "b.json", DiffFormat::kMarkdown).rfind("## jobviz diff\n\n**step time +20.0%", 0) == 0);
  const nlohmann::json doc = nlohmann::json::parse(DiffReport(rows, "a.json", "b.json", DiffFormat::kJson));
  CHECK(doc["verdict"] == "step time +20.0% (30.00 ms -> 36.00 ms)");
  CHECK(doc["metrics"].size() == rows.size());  // JSON folds nothing
}

TEST_CASE("At scale the diff shows the workers that changed most and folds the rest into one line") {
  const nlohmann::json base = Summary(1000);
  nlohmann::json now = base;
  now["workers"][517]["bubble_ratio"] = 0.6;
  const std::string table = DiffReport(DiffSummaries(base, now), "a", "b", DiffFormat::kTable);
  CHECK(table.find("workers[m64 worker 5].bubble_ratio") != std::string::npos);
  CHECK(table.find("... 992 more workers' bubble_ratio") != std::string::npos);
  size_t lines = 0;
  for (char c : table) lines += c == '\n';
  CHECK(lines < 40);
}

TEST_CASE("With stages in the summaries the folded workers go under their stage, each with its range of change") {
  nlohmann::json base = Summary(1000);
  for (size_t w = 0; w < base["workers"].size(); ++w) base["workers"][w]["stage"] = w % 8;
  nlohmann::json now = base;
  for (size_t w = 2; w < base["workers"].size(); w += 8) now["workers"][w]["bubble_ratio"] = 0.35;  // stage 2 idles more
  now["workers"][10]["bubble_ratio"] = 0.5;
  const std::vector<MetricChange> rows = DiffSummaries(base, now);
  const std::string table = DiffReport(rows, "a", "b", DiffFormat::kTable);
  INFO(table);
  // The 8 that changed most are all stage 2's; the other 117 of it fold under it, the rest under theirs.
  CHECK(table.find("... stage 2: 117 more workers' bubble_ratio, +5.0 to +5.0 pp") != std::string::npos);
  CHECK(table.find("... stage 0: 125 more workers' bubble_ratio, +0.0 to +0.0 pp") != std::string::npos);
  CHECK(table.find("... stage 7: 125 more workers' bubble_ratio") != std::string::npos);
  CHECK(table.find("stage 0:") < table.find("stage 2:"));  // in stage order
  CHECK(table.find("--json has them all") > table.find("stage 7:"));
  const nlohmann::json doc = nlohmann::json::parse(DiffReport(rows, "a", "b", DiffFormat::kJson));
  size_t grouped = 0;
  for (const auto& metric : doc["metrics"]) grouped += metric.contains("group");
  CHECK(grouped == 1000);
}

}  // namespace unit_diff_report_test
