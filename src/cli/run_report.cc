#include "cli/run_report.h"

#include <sys/resource.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <map>

#include "cli/huge_pages.h"
#include "cli/report.h"
#include "emit/stop_text.h"
#include "model/time_value.h"

namespace jobviz {

std::string Plural(std::uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

namespace {

std::string RunsLine(const std::vector<RunSummary>& runs, const RunChoice& choice) {
  std::map<size_t, size_t> files_by_count;
  size_t most = 0;
  for (const RunSummary& r : runs) {
    ++files_by_count[r.runs.size()];
    most = std::max(most, r.runs.size());
  }
  if (most == 0) return "";  // no records at all: the error below says so
  std::string line = "jobviz: runs: ";
  if (files_by_count.size() == 1) {
    line += std::to_string(most) + (runs.size() == 1 ? " in the file" : " in every file");
  } else if (files_by_count.size() <= 4) {
    std::string sep;
    for (const auto& [count, files] : files_by_count) {
      line += sep + std::to_string(count) + " in " + Plural(files, "file", "files");
      sep = ", ";
    }
  } else {  // the range and the commonest count: the line stays short at any scale
    const auto common = std::max_element(files_by_count.begin(), files_by_count.end(),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
    line += std::to_string(files_by_count.begin()->first) + " to " + std::to_string(most) + " per file (" +
            std::to_string(common->first) + " in " + Plural(common->second, "file", "files") + ")";
  }
  if (most > 1) {
    size_t not_drawn = 0;
    for (const RunSummary& r : runs) not_drawn += JobsNotDrawn(r.runs, choice);
    const std::string left = not_drawn > 0 ? "; " + Plural(not_drawn, "job", "jobs") + " of the other runs not drawn" : "";
    switch (choice.kind) {
      case RunChoice::Kind::kLast: line += "; drawing the last run of each file" + left + " (--run N or --run all draws others)"; break;
      case RunChoice::Kind::kAll: line += "; drawing all runs"; break;
      case RunChoice::Kind::kNumber: line += "; drawing run " + std::to_string(choice.number) + left; break;
    }
  }
  return line + "\n";
}

// Machines listed one per line up to here; past it, summaries (the report
// stays under ~40 lines at any scale; -v lists every machine).
constexpr size_t kMachinesListed = 8;
constexpr size_t kWarningsShown = 10;

// Workers listed on a machine's line up to here; past it, the range with
// its extremes (40 workers would make a 567-character line).
constexpr size_t kWorkersListed = 8;

std::string MachineJobsLine(const Machine& machine, bool verbose) {
  std::string line = "jobviz: jobs: " + machine.name;
  if (machine.workers.size() > kWorkersListed && !verbose) {
    size_t least = SIZE_MAX, most = 0;
    int least_at = 0, most_at = 0;
    for (const Worker& worker : machine.workers) {
      if (worker.jobs.size() < least) least = worker.jobs.size(), least_at = worker.index;
      if (worker.jobs.size() > most) most = worker.jobs.size(), most_at = worker.index;
    }
    line += " " + std::to_string(machine.workers.size()) + " workers: ";
    if (least == most) return line + std::to_string(most) + " jobs each\n";
    return line + std::to_string(least) + " (worker " + std::to_string(least_at) + ") to " + std::to_string(most) +
           " (worker " + std::to_string(most_at) + ") jobs per worker\n";
  }
  std::string sep = " ";
  for (const Worker& worker : machine.workers) {
    line += sep + "worker " + std::to_string(worker.index) + ": " + std::to_string(worker.jobs.size());
    sep = ", ";
  }
  return line + "\n";
}

// "2048 workers on 256 machines: 650 jobs each" or the range with the extremes.
std::string JobsSummaryLine(const Timeline& timeline) {
  size_t workers = 0, least = SIZE_MAX, most = 0;
  std::string least_at, most_at;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) {
      ++workers;
      const std::string at = WorkerName(machine, worker);
      if (worker.jobs.size() < least) least = worker.jobs.size(), least_at = at;
      if (worker.jobs.size() > most) most = worker.jobs.size(), most_at = at;
    }
  std::string line = "jobviz: jobs: " + Plural(workers, "worker", "workers") + " on " +
                     Plural(timeline.machines.size(), "machine", "machines") + ": ";
  if (least == most) return line + std::to_string(most) + " jobs each\n";
  return line + std::to_string(least) + " (" + least_at + ") to " + std::to_string(most) + " (" + most_at +
         ") jobs per worker\n";
}

std::string JobsLine(const Timeline& timeline, bool verbose) {
  if (timeline.machines.size() > kMachinesListed && !verbose) return JobsSummaryLine(timeline);
  std::string lines;
  for (const Machine& machine : timeline.machines) lines += MachineJobsLine(machine, verbose);
  return lines;
}

std::string StepsLine(const Timeline& timeline, const std::optional<StepRange>& window, size_t outside_steps) {
  if (timeline.steps.empty()) return "jobviz: steps: none found\n";
  if (window) {
    std::string kept = StepName(timeline.steps.front().step);
    if (timeline.steps.size() > 1) kept += " to " + StepName(timeline.steps.back().step);
    std::string line = "jobviz: steps: " + Plural(timeline.steps.size(), "step", "steps") + " kept (" + kept + ") by --steps";
    if (outside_steps > 0)
      line += "; " + Plural(outside_steps, "job", "jobs") + " outside every step left out";
    return line + "\n";
  }
  std::string line = "jobviz: steps: " + Plural(timeline.steps.size(), "step", "steps") + " (" +
                     StepName(timeline.steps.front().step);
  if (timeline.steps.size() > 1) line += " to " + StepName(timeline.steps.back().step);
  line += ") from ";
  line += timeline.step_source == StepSource::kNvtx ? "NVTX step lines" : "job order";
  return line + "\n";
}

std::string VerboseFileLines(const std::vector<FileTotals>& files, const std::vector<RunSummary>& runs) {
  std::string out;
  for (size_t i = 0; i < files.size(); ++i) {
    const FileTotals& scan = files[i];
    out += "jobviz: " + scan.file + ": " + FormatBytes(scan.bytes) + ", " +
           Plural(scan.lines, "line", "lines") + ", " + Plural(scan.records, "record", "records") +
           (scan.named_ranges ? " (" + Plural(scan.named_ranges, "named NVTX range", "named NVTX ranges") + ")" : "") +
           ", " + Plural(runs[i].runs.size(), "run", "runs") + "\n";
    for (size_t r = 0; r < runs[i].runs.size(); ++r) {
      const RunRange& run = runs[i].runs[r];
      if (r > 0)
        out += "jobviz:   run " + std::to_string(r + 1) + " starts at line " + std::to_string(run.first_line) + " (" +
               run.started_by + ")\n";
      for (const std::string& note : run.notes) out += "jobviz:   " + note + "\n";
    }
  }
  return out;
}

std::string SignedDuration(Nanos ns) { return (ns >= 0 ? "+" : "") + FormatDuration(ns); }

std::string MachineClock(const Machine& machine) {
  std::string text = machine.name + " " + machine.clock_method;
  if (machine.clock_method == "unneeded") return machine.name + " as logged";
  if (machine.clock_method != "reference" && machine.clock_method != "none") {
    char drift[32];
    std::snprintf(drift, sizeof drift, "%+.1f ppm", machine.clock_drift_ppm);
    text += " " + SignedDuration(machine.clock_offset) + (machine.clock_drift_ppm != 0 ? " " + std::string(drift) : "");
  }
  return text;
}

// Many machines: how many by each method, and the offsets' range with the
// machines at its ends.
std::string ClocksSummary(const Timeline& timeline) {
  std::map<std::string, size_t> methods;
  const Machine* low = nullptr;
  const Machine* high = nullptr;
  double drift = 0;
  for (const Machine& machine : timeline.machines) {
    ++methods[machine.clock_method];
    drift = std::max(drift, std::abs(machine.clock_drift_ppm));
    if (machine.clock_method == "reference" || machine.clock_method == "none" || machine.clock_method == "unneeded") continue;
    if (!low || machine.clock_offset < low->clock_offset) low = &machine;
    if (!high || machine.clock_offset > high->clock_offset) high = &machine;
  }
  std::string line = "jobviz: clocks:";
  std::string sep = " ";
  for (const auto& [method, count] : methods) {
    line += sep + std::to_string(count) + " " + method;
    sep = ", ";
  }
  if (low)
    line += "; offsets " + SignedDuration(low->clock_offset) + " (" + low->name + ") to " +
            SignedDuration(high->clock_offset) + " (" + high->name + ")";
  if (drift != 0) {
    char text[48];
    std::snprintf(text, sizeof text, "; drift up to %.1f ppm", drift);
    line += text;
  }
  return line + " (-v lists every machine)";
}

std::string ClocksLines(const Timeline& timeline, const ClockAlignment& clocks, bool verbose) {
  if (timeline.machines.size() < 2) return "";
  std::string line;
  if (timeline.machines.size() > kMachinesListed && !verbose) {
    line = ClocksSummary(timeline);
  } else {
    line = "jobviz: clocks:";
    std::string sep = " ";
    for (const Machine& machine : timeline.machines) {
      line += sep + MachineClock(machine);
      sep = ", ";
    }
  }
  line += "\njobviz: pipeline order violations: " + std::to_string(clocks.violations_before) + " before clock alignment, " +
          std::to_string(clocks.violations_after) + " after\n";
  return line;
}

// The first warnings, then how many more (-v shows them all).
std::string WarningLines(const std::vector<std::string>& warnings, bool verbose) {
  std::string lines;
  const size_t shown = verbose ? warnings.size() : std::min(warnings.size(), kWarningsShown);
  for (size_t i = 0; i < shown; ++i) lines += "jobviz: warning: " + warnings[i] + "\n";
  if (shown < warnings.size())
    lines += "jobviz: warning: " + Plural(warnings.size() - shown, "more warning", "more warnings") +
             " (-v shows them all)\n";
  return lines;
}

// Where the stages came from, in one line; nothing for a single worker.
std::string TopologyLine(const Timeline& timeline) {
  size_t workers = 0;
  for (const Machine& machine : timeline.machines) workers += machine.workers.size();
  if (workers < 2) return "";
  const Topology& topology = timeline.topology;
  switch (topology.source) {
    case TopologySource::kNone:
      if (!topology.detail.empty())
        return "jobviz: topology: none (" + topology.detail + "): every worker is its own pipeline stage\n";
      return "jobviz: topology: none found; every worker is its own pipeline stage, in machine then worker order "
             "(--topology pp=N,mp=N,... says otherwise)\n";
    case TopologySource::kStageOrder:
      return "jobviz: topology: one pipeline of " + std::to_string(topology.pipeline_degree()) +
             " stages in --stage_order\n";
    default: break;
  }
  return "jobviz: topology: " + DescribeTopology(topology) + "\n";
}

std::string ReadLine(const FinishedRun& run) {
  return "jobviz: read " + Plural(run.read.files.size(), "file", "files") + " (" + FormatBytes(run.read.bytes) +
         ", " + Plural(run.read.lines, "line", "lines") + "): " + Plural(run.jobs, "job", "jobs") + " drawn, " +
         std::to_string(run.skipped.total()) + " skipped\n";
}

}  // namespace

std::string RunReport(const FinishedRun& run, int verbosity) {
  std::string report;
  // A run that stopped says where first: the most urgent thing the report knows.
  if (verbosity >= 1) report += StopReportLines(run.analysis.stop, run.timeline);
  if (verbosity >= 2) report += VerboseFileLines(run.read.files, run.runs);
  if (verbosity >= 1) {
    report += ReadLine(run);
    report += RunsLine(run.runs, run.run_choice);
    const bool verbose = verbosity >= 2;
    if (run.jobs > 0)
      report += JobsLine(run.timeline, verbose) + TopologyLine(run.timeline) + ClocksLines(run.timeline, run.clocks, verbose) + StepsLine(run.timeline, run.window, run.outside_steps);
  }
  AppendSkipReport(report, run.skipped);
  if (verbosity >= 1) report += WarningLines(run.warnings, verbosity >= 2);
  return report;
}

std::string TimingLine(const FinishedRun& run, double total_seconds) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double read = run.read.seconds;
  char part[128];
  std::snprintf(part, sizeof part, "jobviz: time: read+parse %.3f s (%.2f GB/s)", read,
                read > 0 ? static_cast<double>(run.read.bytes) / read / 1e9 : 0.0);
  std::string line = part;
  double after = 0;
  for (const auto& [stage, seconds] : run.stage_seconds) {
    std::snprintf(part, sizeof part, ", %s %.3f", stage, seconds);
    line += part;
    after += seconds;
  }
  if (run.jobs > 0) {
    std::snprintf(part, sizeof part, " (after parsing %.2f us/job)", after * 1e6 / static_cast<double>(run.jobs));
    line += part;
  }
  std::snprintf(part, sizeof part, "; total %.3f s; peak memory %.1f MB, ", total_seconds,
                static_cast<double>(usage.ru_maxrss) / 1024.0);
  return line + part + HugePagesState() + "\n";
}

}  // namespace jobviz
