#include "commands/stages.h"

#include <unistd.h>

#include <cstdio>

#include "analyse/analysis.h"
#include "analyse/summary.h"
#include "model/step_finder.h"
#include "model/unfinished_steps.h"
#include "cli/exit_status.h"
#include "cli/output_paths.h"
#include "cli/progress.h"
#include "cli/report.h"
#include "parse/scan_logs.h"
#include "parse/timeline_builder.h"
#include "write/atomic_file.h"
#include "write/json_text.h"

namespace jobviz {

namespace {

// The first few machine names (a hint stays one short line at any scale).
std::string MachineNames(const Timeline& timeline) {
  constexpr size_t kShown = 8;
  std::string names;
  for (size_t m = 0; m < timeline.machines.size() && m < kShown; ++m)
    names += (m ? ", " : "") + timeline.machines[m].name;
  if (timeline.machines.size() > kShown) names += ", ... (" + std::to_string(timeline.machines.size()) + " machines)";
  return names;
}

int MachineIndex(const Timeline& timeline, const std::string& name) {
  for (size_t m = 0; m < timeline.machines.size(); ++m)
    if (timeline.machines[m].name == name) return static_cast<int>(m);
  return -1;
}

bool ResolveClockNames(const ClockPlan& clocks, const Timeline& timeline, AlignOptions* align, std::string* error) {
  align->mode = clocks.mode;
  if (!clocks.reference.empty()) {
    align->reference = MachineIndex(timeline, clocks.reference);
    if (align->reference < 0) {
      *error = "--clock_ref " + clocks.reference + ": no such machine";
      return false;
    }
  }
  for (const auto& [name, offset] : clocks.offsets) {
    const int index = MachineIndex(timeline, name);
    if (index < 0) {
      *error = "--clock_offset " + name + ": no such machine";
      return false;
    }
    align->manual_offsets[index] = offset;
  }
  return true;
}

}  // namespace

double SecondsSince(StageClock::time_point start) {
  return std::chrono::duration<double>(StageClock::now() - start).count();
}

bool RefuseOutputsOverInputs(const std::vector<OutputRequest>& outputs, const std::vector<std::string>& inputs,
                             int* status) {
  const std::string clash = OutputOverwritesInput(outputs, inputs);
  if (clash.empty()) return true;
  PrintError(clash, "write the outputs elsewhere, e.g. -o trace.json");
  *status = kExitUsage;
  return false;
}

bool DiscoverInputs(const InputPlan& inputs, const std::vector<OutputRequest>& outputs, LogSet* logs, int* status) {
  DiscoveryError error;
  auto found = inputs.files.empty() ? DiscoverLogs(inputs.log_dir, inputs.multi_machine, inputs.devices, &error)
                                    : LogSetFromFiles(inputs.files, &error);
  if (!found) {
    PrintError(error.message, error.hint);
    *status = kExitBadInput;
    return false;
  }
  std::vector<std::string> paths;
  for (const WorkerLogFile& file : found->files) paths.push_back(file.path);
  if (!RefuseOutputsOverInputs(outputs, paths, status)) return false;
  *logs = std::move(*found);
  return true;
}

bool ReadAndParse(const LogSet& logs, const InputPlan& inputs, int verbosity, std::vector<WorkerLogScan>* scans,
                  int* status, const RunChoice* build_run, BuiltFiles* built) {
  ScannedHook build_each;
  if (build_run) {
    built->builds.resize(logs.files.size());
    built->totals.resize(logs.files.size());
    build_each = [&](size_t i, WorkerLogScan& scan) {
      built->totals[i] = TotalsOf(scan);
      built->builds[i] = BuildFile(logs.files[i], scan, *build_run);
    };
  }
  {
    Progress progress(logs, verbosity >= 1 && isatty(STDERR_FILENO));
    *scans = ScanLogs(logs, inputs.threads, progress.hooks(), build_each);
  }
  for (const WorkerLogScan& scan : *scans)
    if (!scan.read_error.empty()) {
      PrintError(scan.file + ": cannot read: " + scan.read_error);
      *status = kExitBadInput;
      return false;
    }
  return true;
}

bool BuildRun(const LogSet& logs, std::vector<WorkerLogScan> scans, const RunChoice& choice, FinishedRun* run,
              int* status, BuiltFiles* files) {
  const double seconds = run->read.seconds;
  run->read = TotalScans(scans, files ? &files->totals : nullptr);  // before the build takes the records
  run->read.seconds = seconds;
  BuildResult built = files ? AssembleTimeline(logs, std::move(files->builds)) : BuildTimeline(logs, scans, choice);
  if (!built.error.empty()) {
    PrintError(built.error, "--run takes last, all or a run number that every file has");
    *status = kExitBadInput;
    return false;
  }
  run->skipped = run->read.skipped;
  run->runs = std::move(built.runs);
  run->run_choice = choice;
  run->timeline = std::move(built.timeline);
  run->warnings = logs.warnings;
  run->warnings.insert(run->warnings.end(), built.warnings.begin(), built.warnings.end());
  run->jobs = CountJobs(run->timeline);
  return true;
}

bool ResolveNames(const DrawPlan& plan, Timeline* timeline, AlignOptions* align, int* status) {
  std::string error;
  if (!ResolveClockNames(plan.clocks, *timeline, align, &error) ||
      (!plan.stage_order.empty() && !ResolveStageOrder(plan.stage_order, *timeline, &timeline->stage_order, &error))) {
    PrintError(error, "machines are named after their directories: " + MachineNames(*timeline));
    *status = kExitUsage;
    return false;
  }
  return true;
}

bool PlaceWorkers(const DrawPlan& plan, FinishedRun* run, int* status) {
  TopologyOutcome outcome = ResolveTopology(plan.topology, &run->timeline, run->threads);
  if (!outcome.usage_error.empty()) {
    PrintError(outcome.usage_error, "the degrees must multiply to the number of worker logs read (docs/usage.md, --topology)");
    *status = kExitUsage;
    return false;
  }
  run->warnings.insert(run->warnings.end(), outcome.warnings.begin(), outcome.warnings.end());
  return true;
}

bool CutSteps(const StepRange& range, FinishedRun* run, int* status) {
  std::string error;
  if (!KeepSteps(range, run->timeline, &error, &run->outside_steps)) {
    PrintError("--steps: " + error, "the steps are named as in the report's 'steps:' line");
    *status = kExitBadInput;
    return false;
  }
  run->window = range;
  run->jobs = CountJobs(run->timeline);
  return true;
}

void AlignRunClocks(const AlignOptions& align, FinishedRun* run) {
  run->clocks = AlignClocks(run->timeline, align);
  if (!run->clocks.jumps.empty())
    for (std::string& warning : run->warnings)
      if (const size_t at = warning.find(kDrawnAsLogged); at != std::string::npos)
        warning.replace(at, std::string_view(kDrawnAsLogged).size(),
                        "; times are put back in line where a machine's clock jump is found (below), drawn as logged elsewhere");
  run->warnings.insert(run->warnings.end(), run->clocks.warnings.begin(), run->clocks.warnings.end());
}

void FindStepsOnly(FinishedRun* run) {
  StepFinding steps = FindSteps(run->timeline, run->threads);
  run->skipped.Merge(steps.skipped);
  run->warnings.insert(run->warnings.end(), steps.warnings.begin(), steps.warnings.end());
}

void FindRunSteps(FinishedRun* run) {
  StepFinding steps = FindSteps(run->timeline, run->threads);
  run->skipped.Merge(steps.skipped);
  const UnfinishedSteps unfinished = MarkUnfinishedSteps(&run->timeline, run->threads);
  run->analysis.stop = ReportStop(run->timeline, unfinished, run->stop_options);
  // The stop report names who stopped; a bare count of steps names nobody.
  if (unfinished.first != kNoStep)
    std::erase_if(steps.warnings, [](const std::string& w) { return w.starts_with(kDifferentStepCounts); });
  run->warnings.insert(run->warnings.end(), steps.warnings.begin(), steps.warnings.end());
}

void AnalyseRun(FinishedRun* run, WhatIfDrawing what_if) {
  StopReport stop = std::move(run->analysis.stop);
  what_if.draw = what_if.draw && run->jobs <= what_if.max_jobs;
  run->analysis = Analyze(run->timeline, run->threads, what_if);
  run->what_if = MakeWhatIfRows(run->timeline, &run->analysis.bottleneck);
  run->analysis.stop = std::move(stop);
  run->summary = SummaryJson(run->analysis, run->timeline,
                             RunCounts{run->read.files.size(), run->read.lines, run->jobs, run->skipped.total()},
                             run->summary_workers);
}

// Every gate's outcome is printed, a gate that cannot be evaluated (exit 2)
// not hiding one that failed.
int ReportGates(const std::vector<GateResult>& gates) {
  bool failed = false, unknown = false;
  for (const GateResult& gate : gates) {
    if (!gate.value) {  // e.g. a job type these logs do not have
      PrintError("--fail-on " + gate.error, "the names are the keys of --summary-json (docs/analysis.md)");
      unknown = true;
    } else if (gate.failed) {
      PrintError("--fail-on " + gate.condition.text + ": " + gate.Message());
      failed = true;
    }
  }
  return unknown ? kExitUsage : failed ? kExitGateFailed : kExitOk;
}

namespace {

bool EmitToStderr(const EmitterInfo& emitter, const FinishedRun& run) {
  emitter.emit(run, [](std::string_view piece) { std::fwrite(piece.data(), 1, piece.size(), stderr); });
  return std::fflush(stderr) == 0;
}

}  // namespace

bool EmitAll(const std::vector<OutputRequest>& outputs, const FinishedRun& run, bool announce) {
  for (const OutputRequest& output : outputs) {
    const EmitterInfo& emitter = EmitterFor(output.format);
    if (output.to_stderr) {
      EmitToStderr(emitter, run);
      continue;
    }
    AtomicFile file;
    if (!file.Open(output.path, output.path.ends_with(".gz"))) {
      PrintError(file.error(), emitter.hint);
      return false;
    }
    const std::string note = emitter.emit(run, [&](std::string_view piece) { file.Write(piece); });
    if (!file.Commit()) {
      PrintError(file.error());
      return false;
    }
    if (announce && emitter.announce)
      std::fprintf(stderr, "jobviz: wrote %s\n",
                   TerminalText(output.path == "-" ? emitter.noun + std::string(" to standard output") : output.path + note).c_str());
  }
  return true;
}

}  // namespace jobviz
