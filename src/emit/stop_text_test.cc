#include "emit/stop_text.h"

#include <catch2/catch.hpp>

#include <regex>

#include "analyse/stop_evaluation.h"
#include "emit/summary_tables.h"
#include "model/unfinished_steps.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_stop_text_test {

using namespace jobviz;

namespace {

// A stop in a pp8 x dp8 run (64 stages' places), or of its first replica alone.
StopReport StopIn(int dp, Timeline* t) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    sim::StopRun spec;
    spec.run.pp = 8;
    spec.run.mp = 1;
    spec.run.dp = dp;
    spec.run.steps = 3;
    spec.stop = sim::StopKind::kWorker;
    spec.seed = seed;
    sim::StopTruth truth;
    *t = sim::SimulateStop(spec, &truth);
    if (!truth.stopped || !truth.evidence) continue;
    const UnfinishedSteps unfinished = MarkUnfinishedSteps(t, 2);
    StopReport r = ReportStop(*t, unfinished);
    if (r.kind == StopKind::kStopped) return r;
  }
  FAIL("no timed stop among the seeds");
  return {};
}

}  // namespace

TEST_CASE("At scale the stop table's rows past those shown fold to one clause per cause, and add up") {
  Timeline t;
  const StopReport r = StopIn(8, &t);
  REQUIRE(r.lanes.size() == 64);
  const std::string folded = FoldedStopText(r, kShownRows);
  INFO(folded);
  REQUIRE(folded.starts_with("Besides the first 25 rows: "));
  size_t stages = 0;
  const std::regex clause(R"((\d+) more stages? of (\d+) replicas? (wait on replica \d+ stage \d+|wait|are in the all-reduce|were inside a job|finished|unknown))");
  for (auto it = std::sregex_iterator(folded.begin(), folded.end(), clause); it != std::sregex_iterator(); ++it)
    stages += std::stoul((*it)[1]);
  CHECK(stages == 64 - kShownRows);
  // Those waiting on the first to stop say so by its place.
  const LaneStop& first = r.lanes[static_cast<size_t>(r.first)];
  CHECK(folded.find("wait on replica " + std::to_string(first.replica) + " stage " + std::to_string(first.stage)) !=
        std::string::npos);

  // The summary tables carry it right after the stop table, in every format.
  Analysis a;
  a.stop = r;
  const std::vector<SummarySection> sections = SummarySections(a, t);
  const auto table = std::find_if(sections.begin(), sections.end(),
                                  [](const SummarySection& s) { return s.title.starts_with("Where the run stopped"); });
  REQUIRE(table != sections.end());
  CHECK(table->rows.size() == 65);  // every stage still listed (Markdown and HTML fold them in <details>)
  REQUIRE(table + 1 != sections.end());
  CHECK((table + 1)->text == folded);
}

TEST_CASE("A stop table no longer than what is shown has no folded line") {
  Timeline t;
  const StopReport r = StopIn(1, &t);
  CHECK(r.lanes.size() == 8);
  CHECK(FoldedStopText(r, kShownRows).empty());
  CHECK(FoldedStopText(StopReport{}, 0).empty());  // a finished run: nothing to fold
}

}  // namespace unit_stop_text_test
