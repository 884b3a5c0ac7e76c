// jobviz diff BASE NEW: two runs' metrics side by side, each run a summary
// JSON or a log directory analysed on the fly (docs/analysis.md).
#include <cstdio>
#include <filesystem>

#include "align/clock_align.h"
#include "analyse/summary.h"
#include "analyse/summary_diff.h"
#include "cli/exit_status.h"
#include "cli/report.h"
#include "commands/commands.h"
#include "commands/stages.h"
#include "write/json_text.h"
#include "read/log_discovery.h"

namespace jobviz {

namespace {

// A machine*/ tree, as --multi_machine reads: machine directories and no
// workerlog.N of its own (a flat directory may hold a machine_configs/).
bool IsMachineTree(const std::string& dir) {
  std::error_code ec;
  bool machines = false;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!it->is_directory(ec) && WorkerIndexOf(name)) return false;
    machines |= it->is_directory(ec) && name.rfind("machine", 0) == 0;
  }
  return machines;
}

// A log directory through the stages of `jobviz` (clocks on auto), to its
// summary; nothing is written.
bool AnalyseDirectory(const std::string& dir, int verbosity, nlohmann::json* summary, int* status) {
  InputPlan inputs;
  inputs.log_dir = dir;
  inputs.multi_machine = IsMachineTree(dir);
  LogSet logs;
  std::vector<WorkerLogScan> scans;
  FinishedRun run;
  if (!DiscoverInputs(inputs, {}, &logs, status) || !ReadAndParse(logs, inputs, verbosity, &scans, status) ||
      !BuildRun(logs, std::move(scans), RunChoice{}, &run, status))
    return false;
  // Where each worker sits as a direct run finds it (from the logs' HybridParallelInfo lines, else the jobs).
  const DrawPlan defaults;
  if (!PlaceWorkers(defaults, &run, status)) return false;
  run.clocks = AlignClocks(run.timeline, AlignOptions{});
  FindRunSteps(&run);
  if (run.jobs == 0) {
    PrintError(dir + ": no job lines to compare");
    *status = kExitBadInput;
    return false;
  }
  run.summary_workers = WorkerListing::kAll;  // matched worker by worker here; the report folds them
  AnalyseRun(&run);
  *summary = std::move(run.summary);
  if (verbosity >= kNormal)
    PrintReport("jobviz: diff: " + dir + ": " + std::to_string(run.jobs) + " jobs analysed\n");
  return true;
}

bool LoadSummary(const std::string& path, int verbosity, nlohmann::json* summary, int* status) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return AnalyseDirectory(path, verbosity, summary, status);
  std::string error;
  auto read = ReadSummaryFile(path, &error);
  if (!read) {
    PrintError(path + ": " + error, "give the --summary-json of a run, or its log directory");
    *status = kExitBadInput;
    return false;
  }
  *summary = std::move(*read);
  return true;
}

}  // namespace

int RunDiff(const DiffPlan& plan) {
  int status = kExitOk;
  nlohmann::json base, now;
  if (!LoadSummary(plan.base, plan.verbosity, &base, &status) || !LoadSummary(plan.now, plan.verbosity, &now, &status))
    return status;
  std::string report = DiffReport(DiffSummaries(base, now), plan.base, plan.now, plan.format, ConfigurationChanges(base, now),
                                  StopChanges(base, now));
  if (plan.format == DiffFormat::kTable) report = TerminalText(report);  // JSON and Markdown escape names their own way
  std::fwrite(report.data(), 1, report.size(), stdout);
  return std::fflush(stdout) == 0 ? kExitOk : kExitBadInput;
}

}  // namespace jobviz
