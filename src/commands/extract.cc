// jobviz extract: parse one machine's logs where they are and write only the
// records, for `jobviz merge` to draw in one place (docs/extract-merge.md).
#include <cstdio>

#include "cli/exit_status.h"
#include "cli/report.h"
#include "commands/commands.h"
#include "parse/event_file.h"

namespace jobviz {

int RunExtract(const ExtractPlan& plan) {
  if (plan.follow) return RunExtractFollow(plan);
  int status = kExitOk;
  LogSet logs;
  std::vector<WorkerLogScan> scans;
  const std::vector<OutputRequest> outputs = {{OutputFormat::kPerfettoJson, plan.output, false, "-o"}};
  if (!DiscoverInputs(plan.inputs, outputs, &logs, &status)) return status;
  if (!ReadAndParse(logs, plan.inputs, plan.verbosity, &scans, &status)) return status;

  MachineEvents events{plan.machine, logs.files, std::move(scans)};
  std::string error;
  if (!WriteEventFile(plan.output, events, &error)) {
    PrintError(error);
    return kExitBadInput;
  }
  if (plan.verbosity >= kNormal) {
    size_t records = 0;
    for (const WorkerLogScan& scan : events.scans) records += scan.records.size();
    PrintReport("jobviz: extract: " + plan.machine + ": " + std::to_string(events.scans.size()) + " files, " +
                std::to_string(records) + " records -> " + (plan.output == "-" ? "standard output" : plan.output) + "\n");
  }
  return kExitOk;
}

}  // namespace jobviz
