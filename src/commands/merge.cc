// jobviz merge EVENTS...: the records that `jobviz extract` wrote on each
// machine, drawn as if the logs had been read here.
#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "cli/exit_status.h"
#include "cli/report.h"
#include "commands/commands.h"
#include "commands/stages.h"
#include "parse/event_file.h"
#include "parse/scan_logs.h"
#include "parse/timeline_builder.h"
#include "read/parallel_for.h"

namespace jobviz {

namespace {

// One events file, its logs' workers built as soon as it is read (the
// records of all files never pile up: at 131,072 GPUs they were 120 bytes
// a job beside the timeline's 48).
struct ReadMachine {
  MachineEvents events;  // the scans without their records
  std::vector<FileBuild> builds;
  std::vector<FileTotals> totals;
};

// Read on `threads` threads; the first file (in the order given) that cannot
// be read, or that names a machine an earlier one named, is the error.
bool ReadAllEventFiles(const std::vector<std::string>& paths, const RunChoice& run, int threads,
                       std::vector<ReadMachine>* machines) {
  machines->resize(paths.size());
  std::vector<std::string> errors(paths.size());
  ParallelFor(paths.size(), threads, [&](size_t i) {
    ReadMachine& machine = (*machines)[i];
    if (!ReadEventFile(paths[i], &machine.events, &errors[i])) return;
    for (size_t f = 0; f < machine.events.scans.size(); ++f) {
      WorkerLogScan& scan = machine.events.scans[f];
      machine.totals.push_back(TotalsOf(scan));
      machine.builds.push_back(BuildFile(machine.events.files[f], scan, run));
      std::vector<LogRecord>().swap(scan.records);
    }
  });
  std::unordered_map<std::string_view, size_t> named;  // machine -> its first file
  for (size_t i = 0; i < paths.size(); ++i) {
    if (!errors[i].empty()) {
      PrintError(errors[i], "merge reads the files that `jobviz extract` writes");
      return false;
    }
    if (!named.emplace((*machines)[i].events.machine, i).second) {
      PrintError(paths[i] + ": machine " + (*machines)[i].events.machine + " is in two events files");
      return false;
    }
  }
  return true;
}

// The log set, scans and built workers of all machines, in natural order of their names.
void Combine(std::vector<ReadMachine> machines, LogSet* logs, std::vector<WorkerLogScan>* scans, BuiltFiles* built) {
  std::sort(machines.begin(), machines.end(), [](const ReadMachine& a, const ReadMachine& b) {
    return NaturalLess(a.events.machine, b.events.machine);
  });
  // Sized first: grown by doubling, these (840 bytes a worker) took twice
  // their room in fresh pages, zeroed with every other thread idle (0.4 s
  // of a merge of 131,072 GPUs).
  size_t files = 0;
  for (const ReadMachine& machine : machines) files += machine.events.files.size();
  logs->machine_names.reserve(machines.size());
  logs->files.reserve(files);
  scans->reserve(files);
  built->builds.reserve(files);
  built->totals.reserve(files);
  for (size_t m = 0; m < machines.size(); ++m) {
    MachineEvents& events = machines[m].events;
    logs->machine_names.push_back(events.machine);
    for (size_t f = 0; f < events.files.size(); ++f) {
      WorkerLogFile file = events.files[f];
      file.machine = static_cast<int>(m);
      logs->files.push_back(file);
      scans->push_back(std::move(events.scans[f]));
      built->builds.push_back(std::move(machines[m].builds[f]));
      built->builds.back().worker.machine = file.machine;  // built before the machines were put in order
      built->totals.push_back(std::move(machines[m].totals[f]));
    }
  }
}

}  // namespace

int RunMerge(const DrawPlan& plan) {
  const auto started = StageClock::now();
  int status = kExitOk;
  if (!RefuseOutputsOverInputs(plan.outputs, plan.inputs.files, &status)) return status;
  std::vector<ReadMachine> machines;
  if (!ReadAllEventFiles(plan.inputs.files, plan.run, plan.inputs.threads, &machines)) return kExitBadInput;
  LogSet logs;
  std::vector<WorkerLogScan> scans;
  BuiltFiles built;
  Combine(std::move(machines), &logs, &scans, &built);
  return DrawFromScans(plan, logs, std::move(scans), started, &built);
}

}  // namespace jobviz
