// Every output format is an emitter of one shape: it takes the finished run
// (timeline, clock alignment, analysis, what was read) and writes to a sink.
// Where the bytes go (an atomic file, gzip'd when the path ends in .gz,
// standard output or standard error) is not the emitter's business: the
// command writes each output (commands/stages.h, EmitAll).
//
// Adding a format: a file pair beside this one with an EmitFn, and one line
// in the table in emitter.cc.
#pragma once

#include <functional>
#include <future>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "align/clock_align.h"
#include "analyse/analysis.h"
#include "analyse/fail_on.h"
#include "analyse/summary_workers.h"
#include "emit/flow_chains.h"
#include "emit/html_timeline.h"
#include "emit/what_if_rows.h"
#include "model/model.h"
#include "model/step_window.h"
#include "model/read_totals.h"
#include "model/run_splitter.h"

namespace jobviz {

// What each job carries as args in the Perfetto JSON (--json-args). The
// protobuf trace always carries all of them: there they cost a few bytes.
enum class JsonArgs {
  kCompact,  // job_id and source (and run): what neither the slice's name nor its row shows
  kFull,     // also machine, worker, type, micro_batch and step, and the type as the category
};

// The model every emitter and the report read; built once, never changed.
struct FinishedRun {
  ReadTotals read;
  std::vector<RunSummary> runs;  // per file, in file order
  RunChoice run_choice;
  Timeline timeline;             // on the reference clock, steps found
  ClockAlignment clocks;
  SkipTally skipped;             // every line not used: the reader's and the step finder's
  std::vector<std::string> warnings;  // from building, clock alignment and steps, in that order
  Analysis analysis;             // made only when an output reads it (ReadsAnalysis)
  nlohmann::json summary;        // the analysis as a document (analyse/summary.h)
  std::vector<GateResult> gates;  // --fail-on, checked against `summary`
  size_t jobs = 0;               // drawn (within --steps, when given)
  std::optional<StepRange> window;  // --steps
  size_t outside_steps = 0;         // --steps: jobs in no step, dropped
  size_t html_max_jobs = kDefaultHtmlMaxJobs;  // --html-max-jobs
  JsonArgs json_args = JsonArgs::kCompact;     // --json-args
  WorkerListing summary_workers = WorkerListing::kAuto;  // --summary-workers
  bool mark_critical_path = false;  // the traces mark analysis.bottleneck's paths (not --no-critical-path)
  // The traces' hand-off arrows when a trace is written (DrawsFlows),
  // paired on a thread of their own while the outputs are written (the
  // JSON trace waits for them only after its jobs); without them each trace
  // pairs its own.
  std::shared_future<FlowChains> flows;
  // What the traces take: the paths to mark (null: none), the chains
  // (null: the trace pairs its own), now or when they are paired.
  const Bottleneck* marked_paths() const { return mark_critical_path ? &analysis.bottleneck : nullptr; }
  const FlowChains* paired_flows() const { return flows.valid() ? &flows.get() : nullptr; }
  const std::shared_future<FlowChains>* flows_to_come() const { return flows.valid() ? &flows : nullptr; }
  // The drawn what-if's rows (analysis.bottleneck.drawn_what_if), made once
  // for every output that draws them; empty when none is drawn.
  WhatIfRows what_if;
  int threads = 0;               // -j: for emitters that work in parallel; 0 = one per core
  StopOptions stop_options;      // what the user knows of the stop (--hung; follow's stall alarm)
  // Seconds each stage after reading took ("build", "align", ...), for -v.
  std::vector<std::pair<const char*, double>> stage_seconds;
};

// Receives the document in pieces (about 1 MiB for the traces), so a whole
// output never has to sit in memory.
using Sink = std::function<void(std::string_view)>;

enum class OutputFormat { kPerfettoJson, kPerfettoProto, kPerfettoProtoPlain, kChromeJson, kSummaryTables, kSummaryJson, kSummaryMarkdown, kJUnit, kHtml };

// Writes one format; returns what the "wrote" line adds after the path
// (e.g. " (legacy Chrome trace)").
using EmitFn = std::string (*)(const FinishedRun&, const Sink&);

struct EmitterInfo {
  OutputFormat format;
  const char* noun;     // "the trace": "wrote the trace to standard output"
  bool announce;        // whether a "jobviz: wrote ..." line says it was written
  const char* hint;     // shown when the path cannot be written
  EmitFn emit;
  bool reads_analysis = false;  // FinishedRun::analysis and summary: the traces do not
  bool marks_critical_path = false;  // the traces: only analysis.bottleneck's paths (FindCriticalPaths)
  bool draws_flows = false;  // the traces: FinishedRun::flows
  bool draws_what_if = false;  // the traces and the HTML report: analysis.bottleneck.drawn_what_if
  bool flows_after_jobs = false;  // the JSON trace: FinishedRun::flows only after all its jobs (the protobuf from its first)
};

const EmitterInfo& EmitterFor(OutputFormat format);

struct OutputRequest {
  OutputFormat format = OutputFormat::kPerfettoJson;
  std::string path;        // "-": standard output
  bool to_stderr = false;  // instead of `path` (tables beside a trace on stdout)
  std::string flag;        // the option that named it, for messages ("-o")
};

// Whether any of `outputs` shows the analysis (the summary in any form, the
// gates, the HTML report); when none does, it need not be made.
bool ReadsAnalysis(const std::vector<OutputRequest>& outputs);
// Whether any of `outputs` marks the critical path (the Perfetto traces):
// without the analysis, FindCriticalPaths makes what they need.
bool MarksCriticalPath(const std::vector<OutputRequest>& outputs);
// Whether any of `outputs` draws the hand-off arrows (FinishedRun::flows).
bool DrawsFlows(const std::vector<OutputRequest>& outputs);
// Whether any of `outputs` needs the arrows only after all its jobs (paired while it writes them).
bool DrawsFlowsAfterJobs(const std::vector<OutputRequest>& outputs);
// Whether any of `outputs` draws a what-if's replay (--what-if).
bool DrawsWhatIf(const std::vector<OutputRequest>& outputs);


}  // namespace jobviz
