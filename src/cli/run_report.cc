#include "cli/run_report.h"

#include <sys/resource.h>

#include <map>

#include "cli/report.h"
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
  } else {
    std::string sep;
    for (const auto& [count, files] : files_by_count) {
      line += sep + std::to_string(count) + " in " + Plural(files, "file", "files");
      sep = ", ";
    }
  }
  if (most > 1) {
    switch (choice.kind) {
      case RunChoice::Kind::kLast: line += "; drawing the last run of each file (choose with --run N or --run all)"; break;
      case RunChoice::Kind::kAll: line += "; drawing all runs"; break;
      case RunChoice::Kind::kNumber: line += "; drawing run " + std::to_string(choice.number); break;
    }
  }
  return line + "\n";
}

std::string JobsLine(const Timeline& timeline) {
  std::string line;
  for (const Machine& machine : timeline.machines) {
    line += "jobviz: jobs: " + machine.name;
    std::string sep = " ";
    for (const Worker& worker : machine.workers) {
      line += sep + "worker " + std::to_string(worker.index) + ": " + std::to_string(worker.jobs.size());
      sep = ", ";
    }
    line += "\n";
  }
  return line;
}

std::string StepsLine(const Timeline& timeline) {
  if (timeline.steps.empty()) return "jobviz: steps: none found\n";
  std::string line = "jobviz: steps: " + Plural(timeline.steps.size(), "step", "steps") + " (step" +
                     std::to_string(timeline.steps.front().step);
  if (timeline.steps.size() > 1) line += " to step" + std::to_string(timeline.steps.back().step);
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
           ", " + Plural(runs[i].runs.size(), "run", "runs") + "\n";
    for (size_t r = 1; r < runs[i].runs.size(); ++r)
      out += "jobviz:   run " + std::to_string(r + 1) + " starts at line " +
             std::to_string(runs[i].runs[r].first_line) + " (" + runs[i].runs[r].started_by + ")\n";
  }
  return out;
}

std::string SignedDuration(Nanos ns) { return (ns >= 0 ? "+" : "") + FormatDuration(ns); }

std::string ClocksLines(const Timeline& timeline, const ClockAlignment& clocks) {
  if (timeline.machines.size() < 2) return "";
  std::string line = "jobviz: clocks:";
  std::string sep = " ";
  for (const Machine& machine : timeline.machines) {
    line += sep + machine.name + " " + machine.clock_method;
    if (machine.clock_method != "reference" && machine.clock_method != "none") {
      char drift[32];
      std::snprintf(drift, sizeof drift, "%+.1f ppm", machine.clock_drift_ppm);
      line += " " + SignedDuration(machine.clock_offset) + (machine.clock_drift_ppm != 0 ? " " + std::string(drift) : "");
    }
    sep = ", ";
  }
  line += "\njobviz: pipeline order violations: " + std::to_string(clocks.violations_before) + " before clock alignment, " +
          std::to_string(clocks.violations_after) + " after\n";
  return line;
}


std::string ReadLine(const FinishedRun& run) {
  return "jobviz: read " + Plural(run.read.files.size(), "file", "files") + " (" + FormatBytes(run.read.bytes) +
         ", " + Plural(run.read.lines, "line", "lines") + "): " + Plural(run.jobs, "job", "jobs") + " drawn, " +
         std::to_string(run.skipped.total()) + " skipped\n";
}

}  // namespace

std::string RunReport(const FinishedRun& run, int verbosity) {
  std::string report;
  if (verbosity >= 2) report += VerboseFileLines(run.read.files, run.runs);
  if (verbosity >= 1) {
    report += ReadLine(run);
    report += RunsLine(run.runs, run.run_choice);
    if (run.jobs > 0) report += JobsLine(run.timeline) + ClocksLines(run.timeline, run.clocks) + StepsLine(run.timeline);
  }
  AppendSkipReport(report, run.skipped);
  if (verbosity >= 1)
    for (const std::string& warning : run.warnings) report += "jobviz: warning: " + warning + "\n";
  return report;
}

std::string TimingLine(const FinishedRun& run, double total_seconds) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double read = run.read.seconds;
  char line[256];
  std::snprintf(line, sizeof line, "jobviz: time: read+parse %.3f s (%.2f GB/s), total %.3f s; peak memory %.1f MB\n",
                read, read > 0 ? static_cast<double>(run.read.bytes) / read / 1e9 : 0.0, total_seconds,
                static_cast<double>(usage.ru_maxrss) / 1024.0);
  return line;
}

}  // namespace jobviz
