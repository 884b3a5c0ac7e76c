// jobviz merge EVENTS...: the records that `jobviz extract` wrote on each
// machine, drawn as if the logs had been read here.
#include <algorithm>

#include "cli/exit_status.h"
#include "cli/report.h"
#include "commands/commands.h"
#include "parse/event_file.h"

namespace jobviz {

namespace {

bool ReadAllEventFiles(const std::vector<std::string>& paths, std::vector<MachineEvents>* machines) {
  for (const std::string& path : paths) {
    MachineEvents events;
    std::string error;
    if (!ReadEventFile(path, &events, &error)) {
      PrintError(error, "merge reads the files that `jobviz extract` writes");
      return false;
    }
    for (const MachineEvents& other : *machines)
      if (other.machine == events.machine) {
        PrintError(path + ": machine " + events.machine + " is in two events files");
        return false;
      }
    machines->push_back(std::move(events));
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
  if (!ReadAllEventFiles(plan.inputs.files, &machines)) return kExitBadInput;
  LogSet logs;
  std::vector<WorkerLogScan> scans;
  Combine(std::move(machines), &logs, &scans);
  return DrawFromScans(plan, logs, std::move(scans), started);
}

}  // namespace jobviz
