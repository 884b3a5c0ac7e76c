// jobviz [--log_dir DIR | FILE...]: the run as a straight line of stages,
// discover -> read+parse -> build timeline -> align clocks -> find steps ->
// analyse -> emit (docs/architecture.md).
#include <cstdio>
#include <future>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "cli/exit_status.h"
#include "cli/report.h"
#include "cli/run_report.h"
#include "commands/commands.h"
#include "commands/stages.h"
#include "read/parallel_for.h"

namespace jobviz {

namespace {

int NoJobsError(const FinishedRun& run) {
  PrintError("no job lines to draw in " + Plural(run.read.files.size(), "file", "files") + " (" +
                 Plural(run.read.lines, "line", "lines") + " read)",
             "jobviz draws lines like 'Profiler Info: Job (3), type = forward, micro_batch_id = 2, "
             "job_start_time = ..., job_end_time = ...' (docs/workerlog-format.md)");
  return kExitBadInput;
}

// Once the steps are found nothing reads a worker's markers again (step
// ranges, profiler windows, clock syncs: 120 bytes each, ~8 MB for 2,048
// workers with a few dozen each); their room goes to the analysis, the
// run's peak of memory.
void ReleaseMarkers(Timeline* timeline) {
  for (Machine& machine : timeline->machines)
    for (Worker& worker : machine.workers) std::vector<LogRecord>().swap(worker.markers);
}

// The analysis frees tens of MB (each thread's step graph: 8.5 MB of lane
// jobs alone for a step of 133k jobs) that main.cc's malloc settings keep
// for reuse. Whether the trace writers reuse it depends on which of glibc's
// per-thread heaps their threads draw from, so the run's peak memory varied
// by up to 8 MB from one run to the next (docs/benchmarks.md, sixth round).
// Given back here, the peak is the analysis's in every run; the writers
// fault their buffers in afresh (~0.01 s for 1.33 M jobs).
void GiveBackAnalysisMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

// Why a what-if the plan would draw is not drawn, when it is not: a named
// one on a run with no finished step to replay (a warning), the top cause's
// on a run over the cap (a note of how to draw it anyway).
void ReportWhatIfNotDrawn(const DrawPlan& plan, const FinishedRun& run) {
  if (!plan.what_if.draw || run.analysis.bottleneck.drawn_what_if || plan.verbosity < kNormal) return;
  if (plan.what_if.kind) {
    PrintWarning(std::string("--what-if ") + WhatIfKey(*plan.what_if.kind) +
                 ": nothing drawn: the run has no finished step of a pipeline to replay");
  } else if (run.jobs > plan.what_if.max_jobs) {
    PrintReport("jobviz: what-if: the top cause's replay is not drawn on runs of over " + std::to_string(plan.what_if.max_jobs) +
                " jobs (this one has " + std::to_string(run.jobs) + "); --what-if KEY draws it\n");
  }
}

// The process ends once the run is drawn. A run of millions of jobs is
// hundreds of thousands of vectors, and freeing them one by one took longer
// than the kernel takes to drop the whole heap at exit (0.4 s of 11 at 17 M
// jobs), so a large run is left to the exit. The pointer stays reachable, so
// a leak checker does not count it; smaller runs (every test) are freed.
constexpr size_t kLeftToExitJobs = 1'000'000;
void LeaveToExit(FinishedRun run) {
  static FinishedRun* left = nullptr;
  if (run.jobs >= kLeftToExitJobs && !left) left = new FinishedRun(std::move(run));
}

}  // namespace

int DrawFromScans(const DrawPlan& plan, const LogSet& logs, std::vector<WorkerLogScan> scans,
                  StageClock::time_point started, BuiltFiles* built) {
  int status = kExitOk;
  FinishedRun run;
  run.read.seconds = SecondsSince(started);
  run.html_max_jobs = plan.html_max_jobs;
  run.json_args = plan.json_args;
  run.summary_workers = plan.summary_workers;
  run.threads = plan.inputs.threads;
  auto stage_start = StageClock::now();
  const auto stage_done = [&](const char* name) {
    run.stage_seconds.emplace_back(name, SecondsSince(stage_start));
    stage_start = StageClock::now();
  };
  if (!BuildRun(logs, std::move(scans), plan.run, &run, &status, built)) return status;
  stage_done("build");

  AlignOptions align;
  align.threads = run.threads;
  if (!ResolveNames(plan, &run.timeline, &align, &status)) return status;
  if (!PlaceWorkers(plan, &run, &status)) return status;
  run.timeline.rows_by_stage = plan.rows_by_stage;
  AlignRunClocks(align, &run);
  stage_done("align");

  run.stop_options = plan.stop;
  FindRunSteps(&run);
  if (plan.steps && !CutSteps(*plan.steps, &run, &status)) return status;
  ReleaseMarkers(&run.timeline);
  stage_done("steps");

  PrintReport(RunReport(run, plan.verbosity));
  if (run.jobs == 0) return NoJobsError(run);

  // The traces' hand-off arrows are paired on a thread of their own. The
  // JSON trace needs them (4 bytes a job) only after its jobs: paired while
  // it writes them, not beside the analysis, whose peak (the critical paths'
  // step graphs) they would add to. The protobuf trace needs them from its
  // first slice: paired beside the analysis.
  const bool pair_flows = DrawsFlows(plan.outputs) && ThreadCount(run.threads) > 1;
  const bool json_trace = DrawsFlowsAfterJobs(plan.outputs);
  if (pair_flows && !json_trace) run.flows = PairFlowsAside(run.timeline);
  if (!plan.gates.empty() || ReadsAnalysis(plan.outputs) || plan.what_if.draw || plan.record) {  // a trace alone does not need it
    AnalyseRun(&run, plan.what_if);
    ReportWhatIfNotDrawn(plan, run);
    run.gates = EvaluateGates(plan.gates, run.summary, plan.baseline ? &*plan.baseline : nullptr);
  } else if (plan.critical_path && MarksCriticalPath(plan.outputs)) {  // the same paths, without the rest
    run.analysis.bottleneck = FindCriticalPaths(run.timeline, StepWindowsOf(run.timeline, run.threads), run.threads);
  }
  run.mark_critical_path = plan.critical_path;
  GiveBackAnalysisMemory();
  stage_done("analyse");

  if (pair_flows && json_trace) run.flows = PairFlowsAside(run.timeline);

  if (!EmitAll(plan.outputs, run, plan.verbosity >= kNormal)) return kExitBadInput;
  stage_done("write");
  const int recorded = plan.record ? RecordRun(*plan.record, run, plan.merge ? "jobviz merge" : "jobviz", plan.verbosity) : kExitOk;
  status = ReportGates(run.gates);
  if (status == kExitOk) status = recorded;  // a gate's verdict first: the ledger's trouble is said either way
  if (status == kExitOk && plan.verbosity >= kVerbose) PrintReport(TimingLine(run, SecondsSince(started)));
  LeaveToExit(std::move(run));
  return status;
}

int RunDraw(const DrawPlan& plan) {
  const auto started = StageClock::now();
  int status = kExitOk;
  LogSet logs;
  std::vector<WorkerLogScan> scans;
  if (!DiscoverInputs(plan.inputs, plan.outputs, &logs, &status)) return status;
  BuiltFiles built;
  if (!ReadAndParse(logs, plan.inputs, plan.verbosity, &scans, &status, &plan.run, &built)) return status;
  return DrawFromScans(plan, logs, std::move(scans), started, &built);
}

}  // namespace jobviz
