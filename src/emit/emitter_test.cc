#include "emit/emitter.h"

#include <catch2/catch.hpp>

#include "analyse/analysis.h"
#include "analyse/summary.h"
#include "emit/trace_events.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_emitter_test {

using namespace jobviz;

namespace {

// Two stages, two micro-batches: enough for every format to write something.
FinishedRun SampleRun() {
  FinishedRun run;
  Machine machine("machine0");
  for (int w = 0; w < 2; ++w) {
    Worker worker;
    worker.index = w;
    worker.file = "logs/workerlog." + std::to_string(w);
    Nanos at = 1'000'000 + w * 500'000;
    for (int mb = 0; mb < 2; ++mb, at += 1'000'000)
      worker.jobs.push_back(Job{std::to_string(mb), "forward", mb, at, at + 900'000, static_cast<std::uint64_t>(mb + 1), 0});
    for (int mb = 0; mb < 2; ++mb, at += 2'000'000)
      worker.jobs.push_back(Job{std::to_string(mb + 2), "backward", mb, at, at + 1'800'000,
                                static_cast<std::uint64_t>(mb + 3), 0});
    machine.workers.push_back(worker);
  }
  run.timeline.machines.push_back(machine);
  run.timeline.steps = {{0, 1'000'000, 9'000'000}};
  run.jobs = 8;
  run.threads = 1;
  return run;
}

std::string Emit(OutputFormat format, const FinishedRun& run) {
  std::string text;
  EmitterFor(format).emit(run, [&](std::string_view piece) { text += piece; });
  return text;
}

}  // namespace

TEST_CASE("A format that says it does not read the analysis writes the same bytes without it") {
  FinishedRun analysed = SampleRun();
  analysed.analysis = Analyze(analysed.timeline);
  analysed.summary = SummaryJson(analysed.analysis, analysed.timeline, RunCounts{2, 20, 8, 0});
  analysed.mark_critical_path = true;
  // As a run that skipped the analysis leaves it: the critical paths alone,
  // which the traces mark (FindCriticalPaths, the same paths).
  FinishedRun bare = SampleRun();
  bare.analysis.bottleneck = FindCriticalPaths(bare.timeline, StepWindowsOf(bare.timeline, 1), 1);
  bare.mark_critical_path = true;
  REQUIRE(!bare.analysis.bottleneck.critical_paths.empty());
  int unread = 0;
  for (OutputFormat format : {OutputFormat::kPerfettoJson, OutputFormat::kPerfettoProto, OutputFormat::kPerfettoProtoPlain,
                              OutputFormat::kChromeJson, OutputFormat::kSummaryTables, OutputFormat::kSummaryJson,
                              OutputFormat::kSummaryMarkdown, OutputFormat::kJUnit, OutputFormat::kHtml}) {
    INFO("format " << static_cast<int>(format));
    if (EmitterFor(format).reads_analysis) continue;
    ++unread;
    CHECK(Emit(format, analysed) == Emit(format, bare));
  }
  CHECK(unread == 4);  // the traces
  // The summaries do read it: the check above could tell.
  CHECK(Emit(OutputFormat::kSummaryJson, analysed) != Emit(OutputFormat::kSummaryJson, bare));
  CHECK(Emit(OutputFormat::kSummaryTables, analysed) != Emit(OutputFormat::kSummaryTables, bare));
  CHECK(ReadsAnalysis({{OutputFormat::kPerfettoJson, "t.json", false, "-o"}, {OutputFormat::kChromeJson, "p.json", false, "--chrome-output"}}) == false);
  CHECK(MarksCriticalPath({{OutputFormat::kPerfettoJson, "t.json", false, "-o"}}));
  CHECK_FALSE(MarksCriticalPath({{OutputFormat::kChromeJson, "p.json", false, "--chrome-output"}}));
  // The traces do mark it: without it they differ.
  FinishedRun unmarked = SampleRun();
  CHECK(Emit(OutputFormat::kPerfettoJson, unmarked) != Emit(OutputFormat::kPerfettoJson, bare));
  CHECK(ReadsAnalysis({{OutputFormat::kPerfettoJson, "t.json", false, "-o"}, {OutputFormat::kSummaryJson, "s.json", false, "--summary-json"}}) == true);
}

TEST_CASE("The traces draw the hand-off chains paired beside the analysis as they would pair them") {
  const FinishedRun own = SampleRun();  // no chains given: each trace pairs its own
  FinishedRun given = SampleRun();
  given.flows = PairFlowsNow(given.timeline);
  REQUIRE(given.flows.get().hand_offs() > 0);
  FinishedRun none = SampleRun();  // chains of a timeline without hand-offs: the writers must use what they are given
  none.flows = PairFlowsNow(Timeline{});
  for (OutputFormat format : {OutputFormat::kPerfettoJson, OutputFormat::kPerfettoProto, OutputFormat::kPerfettoProtoPlain}) {
    INFO("format " << static_cast<int>(format));
    CHECK(EmitterFor(format).draws_flows);
    CHECK(Emit(format, given) == Emit(format, own));
    CHECK(Emit(format, none) != Emit(format, own));
  }
  CHECK(Emit(OutputFormat::kPerfettoJson, own).find("{\"ph\":\"s\",\"id\":") != std::string::npos);
  CHECK(Emit(OutputFormat::kPerfettoJson, none).find("{\"ph\":\"s\",\"id\":") == std::string::npos);
  // Chains paired on a thread of their own, as the draw command pairs them.
  FinishedRun aside = SampleRun();
  aside.flows = PairFlowsAside(aside.timeline);
  CHECK(Emit(OutputFormat::kPerfettoJson, aside) == Emit(OutputFormat::kPerfettoJson, own));
  CHECK(Emit(OutputFormat::kPerfettoProto, aside) == Emit(OutputFormat::kPerfettoProto, own));
  CHECK(DrawsFlowsAfterJobs({{OutputFormat::kPerfettoJson, "t.json", false, "-o"}}));
  CHECK_FALSE(DrawsFlowsAfterJobs({{OutputFormat::kPerfettoProto, "t.pftrace", false, "-o"}}));
  CHECK(DrawsFlows({{OutputFormat::kPerfettoProto, "t.pftrace", false, "-o"}}));
  CHECK_FALSE(DrawsFlows({{OutputFormat::kChromeJson, "p.json", false, "--chrome-output"},
                          {OutputFormat::kSummaryJson, "s.json", false, "--summary-json"}}));
}

TEST_CASE("Every report a person reads counts its times from the run start, named once") {
  FinishedRun run = SampleRun();
  run.timeline.steps = {{0, 1'400'000'000'001'000'123, 1'400'000'000'009'000'000}};
  for (Job& job : run.timeline.machines[0].workers[0].jobs) job.start += 1'400'000'000'000'000'000, job.end += 1'400'000'000'000'000'000;
  for (Job& job : run.timeline.machines[0].workers[1].jobs) job.start += 1'400'000'000'000'000'000, job.end += 1'400'000'000'000'000'000;
  CHECK(RunStart(run.timeline) == 1'400'000'000'001'000'000);  // worker 0's first job, before the step starts
  run.analysis = Analyze(run.timeline);
  const std::string named = "times after the run start, 2014-05-13T16:53:20.001000000Z";
  for (OutputFormat format : {OutputFormat::kSummaryTables, OutputFormat::kSummaryMarkdown, OutputFormat::kHtml}) {
    const std::string text = Emit(format, run);
    CAPTURE(static_cast<int>(format));
    CHECK(text.find(named) != std::string::npos);
    CHECK(text.find(named, text.find(named) + 1) == std::string::npos);  // once
    CHECK(text.find("+0.000123 ms") != std::string::npos);               // step 0 starts 123 ns after the run start
    CHECK(text.find("1400000000001000.123") == std::string::npos);       // no epoch time
  }
}

}  // namespace unit_emitter_test
