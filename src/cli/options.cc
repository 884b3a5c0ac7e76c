#include "cli/options.h"
#include "cli/draw_flags.h"

#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>

#include "analyse/summary.h"
#include "cli/exit_status.h"
#include "cli/option_values.h"
#include "cli/seconds_option.h"
#include "cli/output_paths.h"
#include "cli/report.h"
#include "write/json_text.h"
#include "emit/perfetto_proto.h"
#include "jobviz/version.h"

namespace jobviz {

namespace {

// A path or name given as "" (an unset variable: --summary-md "$GITHUB_STEP_SUMMARY")
// is a usage error, not "write nothing" or "write the default".
const CLI::Validator kNotEmpty(
    [](const std::string& value) { return value.empty() ? std::string("empty (an unset variable?)") : std::string(); },
    "", "not empty");


std::string CheckWorkerIndex(const std::string& value) {
  const bool digits = !value.empty() && value.size() <= 9 &&
                      std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
  return digits ? "" : "'" + value + "' is not a worker index (expected e.g. --devices 0,2)";
}

void SortUnique(std::vector<int>& values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
}

}  // namespace

void AddInputOptions(CLI::App& app, DrawFlags& f) {
  app.add_option("--log_dir,--log-dir", f.inputs.log_dir, "Directory with workerlog.N files (or machine*/workerlog.N)")
      ->type_name("DIR")->check(kNotEmpty);
  app.add_option("files", f.inputs.files, "Worker logs to read instead of --log_dir, one worker each ('-': stdin)")
      ->type_name("FILE");
  app.add_flag("--multi_machine,--multi-machine", f.inputs.multi_machine,
               "Read LOG_DIR/machine*/workerlog.N, machines in natural order");
  app.add_option("--devices", f.inputs.devices, "Worker indices to read on every machine, e.g. 0,2 (default: all found)")
      ->delimiter(',')
      ->transform([](std::string value) {  // "0, 1", as the original script accepted
        value.erase(0, value.find_first_not_of(" \t"));
        value.erase(value.find_last_not_of(" \t") + 1);
        return value;
      })
      ->check(CheckWorkerIndex)
      ->type_name("N,N,...");
  app.add_option("--run", f.run, "Which of the runs appended to a workerlog to draw: last, all or N (1-based)")
      ->type_name("last|all|N")
      ->check([](const std::string& value) {
        return ParseRunChoice(value) ? std::string() : "expected last, all or a number from 1";
      });
  app.add_option("--steps", f.steps, "Keep only these steps in every output: FIRST:LAST (both included), FIRST:, :LAST")
      ->type_name("A:B")
      ->check([](const std::string& value) {
        std::string error;
        return ParseStepRange(value, &error) ? std::string() : error;
      });
  app.add_option("-j,--threads", f.inputs.threads, "Files read in parallel (default: one per core)")
      ->check(CLI::Range(0, 1024));
}

void AddOutputOptions(CLI::App& app, DrawFlags& f) {
  app.add_option("-o,--output", f.output,
                 "Perfetto trace to write (default LOG_DIR/pipeline_profile_perfetto.json); a .pftrace name writes "
                 "native protobuf, a .gz name gzip")
      ->type_name("PATH")
      ->check(kNotEmpty);
  app.add_option("--rows", f.rows,
                 "Group the rows of the Perfetto traces and the HTML report by machine (default) or by pipeline stage "
                 "(stage: a process per stage, its workers by replica and tensor-parallel index)")
      ->check(CLI::IsMember({"machine", "stage"}));
  app.add_option("--json-args", f.json_args,
                 "Args of each job in the Perfetto JSON: compact (job_id, micro_batch, source) or full (also machine, "
                 "worker, type, step; as a .pftrace always has)")
      ->check(CLI::IsMember({"compact", "full"}));
  app.add_option("--what-if", f.what_if,
                 "Which what-if's replay to draw beside the run in the Perfetto traces and the HTML report: the top "
                 "cause's by default when the analysis is made (as for the summary, the HTML report, the gates) and the "
                 "run has at most 200,000 jobs, a key of what_if in --summary-json to draw it always, or none")
      ->type_name("KEY")
      ->check(CLI::IsMember(WhatIfChoices()));
  app.add_flag("--hung", f.hung,
               "The job was killed because it hung: where no log times the stop and one stage holds every other up, "
               "name it as the first to stop rather than as a suspect (docs/analysis.md, \"Where the run stopped\")");
  app.add_flag("--no-critical-path", f.no_critical_path,
               "Do not mark the critical path in the Perfetto traces (found otherwise even when no summary is asked: "
               "about 0.07 us per job)");
  auto* chrome = app.add_option("--chrome-output", f.chrome_output,
                                "Legacy Chrome trace to write (default LOG_DIR/pipeline_profile.json)")
                     ->type_name("PATH")->check(kNotEmpty);
  app.add_flag("--no-chrome", f.no_chrome, "Do not write the legacy Chrome trace")->excludes(chrome);
  auto* summary = app.add_flag("--summary", f.summary_on, "Print the analysis tables on stdout (default when it is a terminal)");
  app.add_flag("--no-summary", f.summary_off, "Do not print the analysis tables")->excludes(summary);
  app.add_option("--summary-json", f.summary_json, "Write the analysis as JSON to PATH, or - for stdout")
      ->type_name("PATH|-")->check(kNotEmpty);
  app.add_option("--summary-workers", f.summary_workers,
                 "--summary-json's workers: each listed up to 4,096 workers and folded by stage and replica past that "
                 "(auto, the default), all listed, or folded (docs/analysis.md, \"The summary at scale\")")
      ->check(CLI::IsMember({"auto", "all", "folded"}));
  app.add_option("--summary-md", f.summary_md, "Write the analysis as GitHub-flavoured Markdown to PATH, or - for stdout")
      ->type_name("PATH|-")->check(kNotEmpty);
  app.add_option("--junit", f.junit, "Write each --fail-on condition as a JUnit XML test case to PATH")
      ->type_name("PATH")
      ->check(kNotEmpty);
  app.add_option("--html", f.html,
                 "Write a self-contained HTML report (timeline, summary, gates, Open in Perfetto) to PATH")
      ->type_name("PATH")->check(kNotEmpty);
  app.add_option("--html-max-jobs", f.html_max_jobs,
                 "Above this many jobs the HTML timeline shows a window of whole steps (default 200000)")
      ->check(CLI::Range(size_t{1}, size_t{100'000'000}));
  app.add_option("--baseline", f.baseline,
                 "A --summary-json of an earlier run: --fail-on may compare with it, e.g. bubble_ratio > baseline + 0.02")
      ->type_name("SUMMARY.json")->check(kNotEmpty);
  app.add_flag("--allow-stopped", f.allow_stopped,
               "With --baseline, do not fail a run that stopped (by default a baseline gate fails it, exit 3, as "
               "--fail-on stopped does)");
  app.add_option("--fail-on", f.fail_on,
                 "Exit 3 when a condition on the summary holds, e.g. bubble_ratio>0.35 (repeatable)")
      ->type_name("EXPR");
  auto* quiet = app.add_flag("-q,--quiet", f.quiet, "Print only errors");
  app.add_flag("-v,--verbose", f.verbose, "Also print per-file details, timing and memory")->excludes(quiet);
}

void AddClockOptions(CLI::App& app, DrawFlags& f) {
  app.add_option("--clock_align,--clock-align", f.align,
                 "Put machines on one clock: auto (sync when Clock Sync lines exist), sync, causal, none")
      ->check(CLI::IsMember({"auto", "sync", "causal", "none"}));
  app.add_option("--clock_offset,--clock-offset", f.offsets,
                 "Manual clock offsets, machine clock minus reference: machine1=+2.5ms,machine2=-300us")
      ->type_name("M=OFFSET,...")
      ->check([](const std::string& value) {
        std::string error;
        return ParseClockOffsets(value, &error) ? std::string() : error;
      });
  app.add_option("--clock_ref,--clock-ref", f.clock_ref, "Reference machine (default: the first)")
      ->type_name("MACHINE")
      ->check(kNotEmpty);
  app.add_option("--stage_order,--stage-order", f.stage_order,
                 "Pipeline stage order, first stage first (default: machine order, then worker)")
      ->type_name("M:W,M:W,...")
      ->check(kNotEmpty);
  app.add_option("--topology", f.topology,
                 "Hybrid-parallel degrees, e.g. pp=4,mp=2,sharding=4,dp=1 (default: from the logs' HybridParallelInfo or "
                 "jobviz topology lines, else inferred); none: every worker its own stage")
      ->type_name("AXIS=N,...")
      ->check(kNotEmpty);
  app.add_option("--rank-order,--rank_order", f.rank_order,
                 "How --topology lays out global ranks, outermost axis first (default Paddle's: dp,pp,sharding,sep,mp)")
      ->type_name("AXIS,...")
      ->check(kNotEmpty);
}

namespace {

std::string CheckInputs(const InputPlan& inputs, bool merge) {
  if (merge) {
    if (!inputs.log_dir.empty() || inputs.files.empty() || inputs.multi_machine || !inputs.devices.empty())
      return "give the events files of `jobviz extract` (and no --log_dir, --multi_machine or --devices)";
    return "";
  }
  if (inputs.log_dir.empty() == inputs.files.empty())
    return inputs.files.empty() ? "--log_dir is required (or give the log files)" : "give --log_dir or log files, not both";
  if (!inputs.files.empty() && inputs.multi_machine) return "--multi_machine reads a --log_dir tree, not single files";
  return "";
}

// The outputs in the order they are written; the tables move to stderr when
// something else takes stdout. follow writes only the outputs named (a
// trace rewritten every few seconds is asked for, not a default), and
// stdout is its steps'.
std::vector<OutputRequest> PlanOutputs(const DrawFlags& f, DrawCommand command) {
  const bool follow = command == DrawCommand::kFollow;
  const std::filesystem::path dir(f.inputs.log_dir.empty() ? "." : f.inputs.log_dir);  // explicit files: here
  std::vector<OutputRequest> outputs;
  const std::string trace = f.output.empty() ? (dir / "pipeline_profile_perfetto.json").string() : f.output;
  // Packets are compressed one by one unless the whole file is gzip'd anyway.
  const OutputFormat trace_format = !IsProtobufTracePath(trace) ? OutputFormat::kPerfettoJson
                                    : trace.ends_with(".gz")    ? OutputFormat::kPerfettoProtoPlain
                                                                : OutputFormat::kPerfettoProto;
  if (!follow || !f.output.empty()) outputs.push_back({trace_format, trace, false, "-o"});
  // The legacy trace, where the original script put it (the log directory),
  // or beside an -o trace; merge writes it only when asked.
  const std::filesystem::path legacy_dir =
      f.output.empty() || f.output == "-" ? dir : std::filesystem::path(f.output).parent_path();
  if (!f.no_chrome && (command == DrawCommand::kDraw || !f.chrome_output.empty()))
    outputs.push_back({OutputFormat::kChromeJson,
                       f.chrome_output.empty() ? (legacy_dir / "pipeline_profile.json").string() : f.chrome_output, false,
                       "--chrome-output"});
  const bool stdout_taken = f.output == "-" || f.summary_json == "-" || f.summary_md == "-";
  const bool tables = !follow && (f.summary_on || (!f.summary_off && !stdout_taken && isatty(STDOUT_FILENO)));
  if (tables) outputs.push_back({OutputFormat::kSummaryTables, "-", f.output == "-", "--summary"});
  if (!f.summary_json.empty()) outputs.push_back({OutputFormat::kSummaryJson, f.summary_json, false, "--summary-json"});
  if (!f.summary_md.empty()) outputs.push_back({OutputFormat::kSummaryMarkdown, f.summary_md, false, "--summary-md"});
  if (!f.junit.empty()) outputs.push_back({OutputFormat::kJUnit, f.junit, false, "--junit"});
  if (!f.html.empty()) outputs.push_back({OutputFormat::kHtml, f.html, false, "--html"});
  return outputs;
}

// --baseline: a summary JSON, read now so that a missing or broken one fails
// before the logs are read.
bool LoadBaseline(const std::string& path, std::optional<nlohmann::json>* baseline) {
  std::string error;
  *baseline = ReadSummaryFile(path, &error);
  if (*baseline) return true;
  PrintError("--baseline " + path + ": " + error, "give the --summary-json of the run to compare with");
  return false;
}

// --fail-on conditions, their metric names checked against the summary's
// schema (and relative ones against the baseline) so that a typo fails now,
// not after gigabytes of logs.
bool PlanGates(const std::vector<std::string>& texts, const std::optional<nlohmann::json>& baseline,
               std::vector<Condition>* gates) {
  for (const std::string& text : texts) {
    std::string error;
    auto condition = ParseCondition(text, &error);
    if (!condition || !CheckMetricPath(SummarySchema(), condition->path, &error)) {
      PrintError("--fail-on " + error, "the names are the keys of --summary-json (docs/analysis.md)");
      return false;
    }
    if (!Threshold(*condition, baseline ? &*baseline : nullptr, &error)) {
      PrintError("--fail-on " + error, baseline ? "check the --baseline file: is it the summary of a good run?"
                                                : "the names are the keys of --summary-json (docs/analysis.md)");
      return false;
    }
    gates->push_back(std::move(*condition));
  }
  return true;
}

}  // namespace

int UsageError(const char* command, const std::string& message, const std::string& hint) {
  std::fprintf(stderr, "%s: error: %s\n", command, TerminalText(message).c_str());
  if (!hint.empty()) std::fprintf(stderr, "  hint: %s\n", TerminalText(hint).c_str());
  return kExitUsage;
}

Parsed<DrawPlan> ToPlan(DrawFlags& f, DrawCommand kind) {
  const bool merge = kind == DrawCommand::kMerge;
  const char* command = merge ? "jobviz merge" : kind == DrawCommand::kFollow ? "jobviz follow" : "jobviz";
  if (const std::string error = CheckInputs(f.inputs, merge); !error.empty())
    return {std::nullopt, UsageError(command, error, merge ? "" : "run 'jobviz --help' for the options")};
  DrawPlan plan;
  std::string error;
  plan.merge = merge;
  SortUnique(f.inputs.devices);
  plan.inputs = f.inputs;
  plan.run = *ParseRunChoice(f.run);
  if (!f.steps.empty()) plan.steps = *ParseStepRange(f.steps, &error);
  plan.clocks.mode = f.align == "sync" ? AlignMode::kSync : f.align == "causal" ? AlignMode::kCausal
                     : f.align == "none" ? AlignMode::kNone : AlignMode::kAuto;
  plan.clocks.reference = f.clock_ref;
  if (!f.offsets.empty()) plan.clocks.offsets = *ParseClockOffsets(f.offsets, &error);
  if (!f.stage_order.empty()) {
    auto order = ParseStageOrder(f.stage_order, &error);
    if (!order) return {std::nullopt, UsageError(command, "--stage_order: " + error, "e.g. --stage_order machine1:0,machine0:1 (machines are named after their directories)")};
    plan.stage_order = std::move(*order);
  }
  if (!f.topology.empty() || !f.rank_order.empty()) {
    const char* hint = "e.g. --topology pp=4,mp=2,sharding=4 (axes pp, mp or tp, sharding, dp, sep; docs/usage.md)";
    if (!f.stage_order.empty()) return {std::nullopt, UsageError(command, "--topology and --stage_order both say where stages are; give one", hint)};
    if (f.topology == "none") {
      plan.topology.none = true;
    } else if (!f.topology.empty()) {
      AxisValues degrees;
      if (!ParseDegrees(f.topology, &degrees, &error)) return {std::nullopt, UsageError(command, "--topology: " + error, hint)};
      plan.topology.degrees = degrees;
      plan.topology.degrees_text = f.topology;
    }
    if (!f.rank_order.empty()) {
      if (!plan.topology.degrees) return {std::nullopt, UsageError(command, "--rank-order needs --topology", hint)};
      if (!ParseRankOrder(f.rank_order, &plan.topology.rank_order, &error))
        return {std::nullopt, UsageError(command, "--rank-order: " + error, "e.g. --rank-order pp,dp,mp (outermost first)")};
    }
  }
  if (!f.baseline.empty() && !f.baseline_history.empty())
    return {std::nullopt, UsageError(command, "--baseline and --baseline-history both give the baseline; give one", "")};
  if (!f.baseline.empty() && !LoadBaseline(f.baseline, &plan.baseline)) return {std::nullopt, kExitUsage};
  if (!f.baseline_history.empty())
    if (const int code = LoadHistoryBaseline(f, merge, &plan.baseline); code != kExitOk) return {std::nullopt, code};
  // A run held against a baseline that stopped is no faster or slower: it failed (docs/ci.md).
  if (plan.baseline && !f.allow_stopped &&
      std::none_of(f.fail_on.begin(), f.fail_on.end(), [](const std::string& c) { return c.starts_with("stopped"); }))
    f.fail_on.push_back("stopped");
  if (!PlanGates(f.fail_on, plan.baseline, &plan.gates)) return {std::nullopt, kExitUsage};
  plan.outputs = PlanOutputs(f, kind);
  plan.html_max_jobs = f.html_max_jobs;
  plan.json_args = f.json_args == "full" ? JsonArgs::kFull : JsonArgs::kCompact;
  plan.summary_workers = f.summary_workers == "all"      ? WorkerListing::kAll
                         : f.summary_workers == "folded" ? WorkerListing::kFolded
                                                         : WorkerListing::kAuto;
  plan.rows_by_stage = f.rows == "stage";
  plan.critical_path = !f.no_critical_path;
  plan.stop.hung = f.hung;
  plan.what_if = PlanWhatIf(f.what_if, plan.outputs, !plan.gates.empty());
  if (const std::string clash = OutputClash(plan.outputs); !clash.empty())
    return {std::nullopt, UsageError(command, clash, "write each output to a path of its own")};
  std::string record_error;
  plan.record = PlanRecord(f, merge || (kind == DrawCommand::kFollow && f.inputs.log_dir.empty()), &record_error);
  if (!record_error.empty())
    return {std::nullopt, UsageError(command, record_error, "e.g. --record runs.db --run-name nightly-7b --tag commit=3f2a1c9")};
  plan.verbosity = f.quiet ? kQuiet : f.verbose ? kVerbose : kNormal;
  return {std::move(plan), kExitOk};
}


Parsed<DrawPlan> ParseDrawCommandLine(int argc, char** argv, bool merge) {
  CLI::App app{
      "jobviz: draw when every pipeline job ran on every GPU, from the worker logs of a\n"
      "pipeline-parallel training run, as a Perfetto / chrome://tracing timeline."};
  app.get_formatter()->column_width(30);
  app.footer("Subcommands (each with --help): jobviz follow (a running job, step by step), jobviz extract\n"
             "(parse where the logs are), jobviz merge (draw the events files of extract), jobviz diff BASE NEW\n"
             "(two runs' metrics side by side), jobviz history / jobviz hosts LEDGER (the runs --record kept).\n"
             "docs/usage.md");
  DrawFlags flags;
  AddInputOptions(app, flags);
  AddOutputOptions(app, flags);
  AddClockOptions(app, flags);
  AddRecordOptions(app, flags, /*baseline=*/true);
  app.set_version_flag("--version", "jobviz " JOBVIZ_VERSION);
  if (auto stop = ParseOrExit<DrawPlan>(app, argc, argv, "jobviz")) return std::move(*stop);
  return ToPlan(flags, merge ? DrawCommand::kMerge : DrawCommand::kDraw);
}

Parsed<DiffPlan> ParseDiffCommandLine(int argc, char** argv) {
  CLI::App app{"jobviz diff: the metrics of two runs side by side (bubble overall and per worker, step time\n"
               "p50/p95, job-type means, critical path by cause, what-if gains). Each run is a --summary-json or a log directory."};
  DiffPlan plan;
  bool json = false, markdown = false, quiet = false;
  app.add_option("base", plan.base, "The run to compare with: SUMMARY.json or a log directory")
      ->required()->type_name("BASE")->check(kNotEmpty);
  app.add_option("new", plan.now, "The run compared: SUMMARY.json or a log directory")
      ->required()->type_name("NEW")->check(kNotEmpty);
  auto* json_flag = app.add_flag("--json", json, "JSON instead of a table");
  app.add_flag("--md", markdown, "A GitHub-flavoured Markdown table")->excludes(json_flag);
  app.add_flag("-q,--quiet", quiet, "Print only errors (when a log directory is analysed)");
  if (auto stop = ParseOrExit<DiffPlan>(app, argc, argv, "jobviz diff")) return std::move(*stop);
  plan.format = json ? DiffFormat::kJson : markdown ? DiffFormat::kMarkdown : DiffFormat::kTable;
  plan.verbosity = quiet ? kQuiet : kNormal;
  return {std::move(plan), kExitOk};
}

Parsed<ExtractPlan> ParseExtractCommandLine(int argc, char** argv) {
  CLI::App app{"jobviz extract: parse one machine's worker logs where they are and write only the records\n"
               "(jobs, steps, clock-sync points, counts) for `jobviz merge`."};
  ExtractPlan plan;
  bool quiet = false;
  app.add_option("--log_dir,--log-dir", plan.inputs.log_dir, "This machine's directory of workerlog.N files")
      ->required()->type_name("DIR")->check(kNotEmpty);
  app.add_option("--machine", plan.machine, "The machine's name in the merged trace (e.g. machine3)")
      ->required()->type_name("NAME")->check(kNotEmpty);
  app.add_option("-o,--output", plan.output, "Events file to write (gzip JSON lines, - for stdout)")
      ->required()->type_name("PATH")->check(kNotEmpty);
  app.add_option("--devices", plan.inputs.devices, "Worker indices to read (default: all found)")
      ->delimiter(',')->type_name("N,N,...");
  app.add_option("-j,--threads", plan.inputs.threads, "Files read in parallel")->check(CLI::Range(0, 1024));
  app.add_flag("--follow", plan.follow,
               "Write the records as the logs grow, as an open stream of JSON lines (not gzip), until stopped "
               "(SIGINT, SIGTERM): for `jobviz merge --follow` (docs/extract-merge.md)");
  app.add_option("--poll", plan.poll_seconds, "With --follow: look at every log this often, in seconds (default 1)")
      ->type_name("SECONDS")->check(SecondsBetween(0.05, 3600.0));
  app.add_flag("-q,--quiet", quiet, "Print only errors");
  if (auto stop = ParseOrExit<ExtractPlan>(app, argc, argv, "jobviz extract")) return std::move(*stop);
  plan.verbosity = quiet ? kQuiet : kNormal;
  SortUnique(plan.inputs.devices);
  // --follow opens its stream at once (a batch run checks as it discovers the logs).
  if (plan.follow)
    if (const std::string clash = FollowedOutputClash({{OutputFormat::kPerfettoJson, plan.output, false, "-o"}}, plan.inputs.log_dir, {});
        !clash.empty())
      return {std::nullopt, UsageError("jobviz extract", clash, "write the stream outside the followed logs")};
  return {std::move(plan), kExitOk};
}

}  // namespace jobviz
