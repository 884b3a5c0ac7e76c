// jobviz merge EVENTS...: the records that `jobviz extract` wrote on each
// machine, drawn as if the logs had been read here.
#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "cli/exit_status.h"
#include "cli/report.h"
#include "commands/commands.h"
#include "parse/event_file.h"
#include "read/parallel_for.h"

namespace jobviz {

namespace {

// Read on `threads` threads; the first file (in the order given) that cannot
// be read, or that names a machine an earlier one named, is the error.
bool ReadAllEventFiles(const std::vector<std::string>& paths, int threads, std::vector<MachineEvents>* machines) {
  machines->resize(paths.size());
  std::vector<std::string> errors(paths.size());
  ParallelFor(paths.size(), threads, [&](size_t i) { ReadEventFile(paths[i], &(*machines)[i], &errors[i]); });
  std::unordered_map<std::string_view, size_t> named;  // machine -> its first file
  for (size_t i = 0; i < paths.size(); ++i) {
    if (!errors[i].empty()) {
      PrintError(errors[i], "merge reads the files that `jobviz extract` writes");
      return false;
    }
    if (!named.emplace((*machines)[i].machine, i).second) {
      PrintError(paths[i] + ": machine " + (*machines)[i].machine + " is in two events files");
      return false;
    }
  }
  return true;
}

// The log set and scans of all machines, in natural order of their names.
void Combine(std::vector<MachineEvents> machines, LogSet* logs, std::vector<WorkerLogScan>* scans) {
  std::sort(machines.begin(), machines.end(),
            [](const MachineEvents& a, const MachineEvents& b) { return NaturalLess(a.machine, b.machine); });
  for (size_t m = 0; m < machines.size(); ++m) {
    logs->machine_names.push_back(machines[m].machine);
    for (size_t f = 0; f < machines[m].files.size(); ++f) {
      WorkerLogFile file = machines[m].files[f];
      file.machine = static_cast<int>(m);
      logs->files.push_back(file);
      scans->push_back(std::move(machines[m].scans[f]));
    }
  }
}

}  // namespace

int RunMerge(const DrawPlan& plan) {
  const auto started = StageClock::now();
  int status = kExitOk;
  if (!RefuseOutputsOverInputs(plan.outputs, plan.inputs.files, &status)) return status;
  std::vector<MachineEvents> machines;
  if (!ReadAllEventFiles(plan.inputs.files, plan.inputs.threads, &machines)) return kExitBadInput;
  LogSet logs;
  std::vector<WorkerLogScan> scans;
  Combine(std::move(machines), &logs, &scans);
  return DrawFromScans(plan, logs, std::move(scans), started);
}

}  // namespace jobviz
