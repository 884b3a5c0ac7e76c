// The stages a command runs, one call each, shared by draw, merge and
// extract. Each prints its own error and returns false (with the exit
// status in `*status`) when the command cannot go on.
#pragma once

#include <chrono>
#include <vector>

#include "cli/plan.h"
#include "emit/emitter.h"
#include "parse/workerlog_scan.h"
#include "read/log_discovery.h"

namespace jobviz {

using StageClock = std::chrono::steady_clock;

// Refuses (exit 2, with the reason) an output that is one of `inputs`.
bool RefuseOutputsOverInputs(const std::vector<OutputRequest>& outputs, const std::vector<std::string>& inputs,
                             int* status);

// discover: the log files a plan names; refuses outputs that are inputs.
bool DiscoverInputs(const InputPlan& inputs, const std::vector<OutputRequest>& outputs, LogSet* logs, int* status);

// Files whose workers were built as soon as they were scanned, and their
// totals, counted before their records were taken.
struct BuiltFiles {
  std::vector<FileBuild> builds;
  std::vector<FileTotals> totals;
};

// read + parse: every file, several at once, with a progress line on a
// terminal. Fails on the first file that could not be read to its end.
// With `build_run`, each file's worker is built right after its scan, on
// the same thread, into `built`: the records of all files never pile up.
bool ReadAndParse(const LogSet& logs, const InputPlan& inputs, int verbosity, std::vector<WorkerLogScan>* scans,
                  int* status, const RunChoice* build_run = nullptr, BuiltFiles* built = nullptr);

// build timeline: picks the run to show in each file (or takes the files
// built while reading); consumes the scans.
bool BuildRun(const LogSet& logs, std::vector<WorkerLogScan> scans, const RunChoice& choice, FinishedRun* run,
              int* status, BuiltFiles* built = nullptr);

// find steps: fills the timeline's steps, counting what the step finder skips
// and what it warns about into the run.
void FindRunSteps(FinishedRun* run);
// The same without the unfinished steps and the stop report (follow's turns).
void FindStepsOnly(FinishedRun* run);

// analyse: the analysis and the summary document, counts from the run.
// `what_if`: the replay to draw (none for runs of more than its max_jobs).
void AnalyseRun(FinishedRun* run, WhatIfDrawing what_if = {});

// The plan's machine names (--clock_ref, --clock_offset, --stage_order)
// resolved against the machines read.
bool ResolveNames(const DrawPlan& plan, Timeline* timeline, AlignOptions* align, int* status);

// align: every machine on the reference clock, jumps undone first; the
// clock warnings added to the run's (a clock set back that a jump found
// explains is no longer said to be drawn as logged).
void AlignRunClocks(const AlignOptions& align, FinishedRun* run);

// Where each worker sits (stage, tensor-parallel peer, replica): from
// --topology, the logs or the jobs (model/topology_resolver.h); exit 2 when
// the user's --topology cannot fit the logs.
bool PlaceWorkers(const DrawPlan& plan, FinishedRun* run, int* status);

// --steps: keeps only the window's jobs and steps (and counts what is left).
bool CutSteps(const StepRange& range, FinishedRun* run, int* status);

// The --fail-on results on stderr: exit 3 when a gate fails, 2 when one
// names nothing in these logs.
int ReportGates(const std::vector<GateResult>& gates);

double SecondsSince(StageClock::time_point start);

// write: each output in order, atomically, with "jobviz: wrote" lines on
// stderr when `announce`. Stops at the first failure, printing why; returns
// whether all were written.
bool EmitAll(const std::vector<OutputRequest>& outputs, const FinishedRun& run, bool announce);

}  // namespace jobviz
