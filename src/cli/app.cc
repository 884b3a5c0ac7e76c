#include "cli/app.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <map>
#include <optional>
#include <thread>

#include "analyse/analysis.h"
#include "emit/atomic_file.h"
#include "parse/event_file.h"
#include "analyse/fail_on.h"
#include "align/pipeline_order.h"
#include "analyse/summary.h"
#include "align/clock_align.h"
#include "cli/exit_status.h"
#include "read/log_discovery.h"
#include "cli/report.h"
#include "model/step_finder.h"
#include "model/timeline_builder.h"
#include "emit/trace_writer.h"
#include "parse/workerlog_scan.h"

namespace jobviz {

namespace {

using Clock = std::chrono::steady_clock;

// A one-line progress display on stderr while the logs are read, for runs
// long enough to need one (only on a terminal; never with -q).
class Progress {
 public:
  Progress(const LogSet& logs, bool enabled) {
    if (!enabled) return;
    for (const WorkerLogFile& file : logs.files) {
      std::error_code ec;
      const auto size = std::filesystem::file_size(file.path, ec);
      // gzip sizes say nothing about the text inside; no percentage then.
      if (ec || file.path.size() < 3 || file.path.compare(file.path.size() - 3, 3, ".gz") == 0) total_ = 0, sized_ = false;
      else if (sized_) total_ += size;
    }
    files_ = logs.files.size();
    ticker_ = std::thread([this] { Run(); });
  }
  ~Progress() {
    if (!ticker_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_one();
    ticker_.join();
    if (shown_) std::fputs("\r\033[K", stderr);
  }
  std::atomic<std::uint64_t>* bytes() { return ticker_.joinable() ? &bytes_ : nullptr; }
  void FileDone() { files_done_.fetch_add(1); }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mutex_);
    // Quiet for the first half second: short runs need no progress bar.
    if (wake_.wait_for(lock, std::chrono::milliseconds(500), [this] { return done_; })) return;
    do {
      const std::uint64_t read = bytes_.load();
      std::string line = "\rjobviz: reading " + std::to_string(files_done_.load()) + " of " +
                         std::to_string(files_) + " files, " + FormatBytes(read);
      if (sized_ && total_ > 0) {
        const int percent = static_cast<int>(std::min<std::uint64_t>(100, read * 100 / total_));
        line += " of " + FormatBytes(total_) + " [" + std::string(percent / 5, '#') +
                std::string(20 - percent / 5, '.') + "] " + std::to_string(percent) + "%";
      }
      std::fputs((line + "\033[K").c_str(), stderr);
      std::fflush(stderr);
      shown_ = true;
    } while (!wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return done_; }));
  }

  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<size_t> files_done_{0};
  std::uint64_t total_ = 0;
  bool sized_ = true, shown_ = false, done_ = false;
  size_t files_ = 0;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread ticker_;
};

// Reads every file, several at once: each file is independent until the
// timeline is put together.
std::vector<WorkerLogScan> ScanAll(const LogSet& logs, int threads_wanted, Progress& progress) {
  const LineParser parser;
  std::vector<WorkerLogScan> scans(logs.files.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < scans.size(); i = next++) {
      std::string error;
      auto source = OpenByteSource(logs.files[i].path, &error);
      if (!source) {
        scans[i].file = logs.files[i].path;
        scans[i].read_error = error;
        continue;
      }
      scans[i] = ScanWorkerLog(logs.files[i].path == "-" ? "<stdin>" : logs.files[i].path, *source, parser,
                               LineReader::kDefaultBlock, progress.bytes());
      progress.FileDone();
    }
  };
  size_t threads = threads_wanted > 0 ? static_cast<size_t>(threads_wanted)
                                      : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min(threads, scans.size());
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& thread : pool) thread.join();
  return scans;
}

// Writes `path` atomically with what `fill` puts into it; reports failures.
bool WriteAtomically(const std::string& path, const std::string& hint,
                     const std::function<void(AtomicFile&)>& fill) {
  AtomicFile file;
  if (!file.Open(path)) {
    PrintError(file.error(), hint);
    return false;
  }
  fill(file);
  if (!file.Commit()) {
    PrintError(file.error());
    return false;
  }
  return true;
}

bool WriteTrace(const std::string& path, bool perfetto, const Timeline& timeline,
                TraceStats* stats) {
  return WriteAtomically(path, "choose another path with -o/--output or --chrome-output", [&](AtomicFile& file) {
    const TraceSink sink = [&](std::string_view piece) { file.Write(piece); };
    *stats = perfetto ? WritePerfettoTrace(timeline, sink) : WriteChromeTrace(timeline, sink);
  });
}

std::string Plural(std::uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

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

std::string VerboseFileLines(const std::vector<WorkerLogScan>& scans,
                             const std::vector<RunSummary>& runs) {
  std::string out;
  for (size_t i = 0; i < scans.size(); ++i) {
    const WorkerLogScan& scan = scans[i];
    out += "jobviz: " + scan.file + ": " + FormatBytes(scan.bytes) + ", " +
           Plural(scan.lines, "line", "lines") + ", " + Plural(scan.records.size(), "record", "records") +
           ", " + Plural(runs[i].runs.size(), "run", "runs") + "\n";
    for (size_t r = 1; r < runs[i].runs.size(); ++r)
      out += "jobviz:   run " + std::to_string(r + 1) + " starts at line " +
             std::to_string(runs[i].runs[r].first_line) + " (" + runs[i].runs[r].started_by + ")\n";
  }
  return out;
}

std::string MachineNames(const Timeline& timeline) {
  std::string names;
  for (const Machine& machine : timeline.machines) names += (names.empty() ? "" : ", ") + machine.name;
  return names;
}

int MachineIndex(const Timeline& timeline, const std::string& name) {
  for (size_t m = 0; m < timeline.machines.size(); ++m)
    if (timeline.machines[m].name == name) return static_cast<int>(m);
  return -1;
}

// Turns --clock_ref and --clock_offset machine names into indices.
bool ResolveMachines(const Options& options, const Timeline& timeline, AlignOptions* align, std::string* error) {
  if (!options.clock_ref.empty()) {
    align->reference = MachineIndex(timeline, options.clock_ref);
    if (align->reference < 0) {
      *error = "--clock_ref " + options.clock_ref + ": no such machine";
      return false;
    }
  }
  for (const auto& [name, offset] : options.clock_offsets) {
    const int index = MachineIndex(timeline, name);
    if (index < 0) {
      *error = "--clock_offset " + name + ": no such machine";
      return false;
    }
    align->manual_offsets[index] = offset;
  }
  return true;
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


// Analysis: tables, JSON and the --fail-on gates. Returns the exit status.
int ReportAnalysis(const Options& options, const Timeline& timeline, const RunCounts& counts) {
  const Analysis analysis = Analyze(timeline);
  const nlohmann::json summary = SummaryJson(analysis, timeline, counts);
  const bool trace_on_stdout = options.output == "-";
  const bool tables = options.summary == 1 || (options.summary == -1 && !trace_on_stdout &&
                                                options.summary_json != "-" && isatty(STDOUT_FILENO));
  if (tables) std::fputs(SummaryTables(analysis).c_str(), trace_on_stdout ? stderr : stdout);
  const auto write_summary = [&](AtomicFile& file) { file.Write(summary.dump(2) + "\n"); };
  if (!options.summary_json.empty() && !WriteAtomically(options.summary_json, "", write_summary)) return kExitBadInput;

  int status = kExitOk;
  for (const std::string& text : options.fail_on) {
    std::string error;
    const auto condition = ParseCondition(text, &error);
    const auto value = condition ? ResolveMetric(summary, condition->path, &error) : std::nullopt;
    if (!value) {
      PrintError("--fail-on " + error, "the names are the keys of --summary-json (docs/analysis.md)");
      return kExitUsage;
    }
    if (Holds(*condition, *value)) {
      char shown[64];
      std::snprintf(shown, sizeof shown, "%g", *value);
      PrintError("--fail-on " + condition->text + ": " + condition->path + " is " + shown);
      status = kExitGateFailed;
    }
  }
  return status;
}

// `jobviz merge`: the log set and scans from events files, machines in
// natural order of their names.
bool LoadEventFiles(const std::vector<std::string>& paths, LogSet* logs, std::vector<WorkerLogScan>* scans) {
  std::vector<MachineEvents> machines;
  for (const std::string& path : paths) {
    MachineEvents events;
    std::string error;
    if (!ReadEventFile(path, &events, &error)) {
      PrintError(error, "merge reads the files that `jobviz extract` writes");
      return false;
    }
    for (const MachineEvents& other : machines)
      if (other.machine == events.machine) {
        PrintError(path + ": machine " + events.machine + " is in two events files");
        return false;
      }
    machines.push_back(std::move(events));
  }
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
  return true;
}

int RunExtract(const Options& options, const LogSet& logs, std::vector<WorkerLogScan> scans) {
  MachineEvents events{options.machine, logs.files, std::move(scans)};
  std::string error;
  if (!WriteEventFile(options.output, events, &error)) {
    PrintError(error);
    return kExitBadInput;
  }
  if (options.verbosity >= 1) {
    size_t records = 0;
    for (const WorkerLogScan& scan : events.scans) records += scan.records.size();
    std::fprintf(stderr, "jobviz: extract: %s: %zu files, %zu records -> %s\n", options.machine.c_str(),
                 events.scans.size(), records, options.output.c_str());
  }
  return kExitOk;
}

}  // namespace

int RunJobviz(const Options& options) {
  const auto started = Clock::now();
  DiscoveryError discovery_error;
  std::optional<LogSet> logs;
  std::vector<WorkerLogScan> scans;
  if (options.mode == Options::Mode::kMerge) {
    logs.emplace();
    if (!LoadEventFiles(options.files, &*logs, &scans)) return kExitBadInput;
  } else {
    logs = options.files.empty()
               ? DiscoverLogs(options.log_dir, options.multi_machine, options.devices, &discovery_error)
               : LogSetFromFiles(options.files, &discovery_error);
    if (!logs) {
      PrintError(discovery_error.message, discovery_error.hint);
      return kExitBadInput;
    }
    Progress progress(*logs, options.verbosity >= 1 && isatty(STDERR_FILENO));
    scans = ScanAll(*logs, options.threads, progress);
  }
  const double read_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  std::uint64_t bytes = 0, lines = 0;
  SkipTally skipped;
  for (const WorkerLogScan& scan : scans) {
    if (!scan.read_error.empty()) {
      PrintError(scan.file + ": cannot read: " + scan.read_error);
      return kExitBadInput;
    }
    bytes += scan.bytes;
    lines += scan.lines;
    skipped.Merge(scan.skipped);
  }

  if (options.mode == Options::Mode::kExtract) return RunExtract(options, *logs, std::move(scans));

  BuildResult built = BuildTimeline(*logs, scans, options.run);
  if (!built.error.empty()) {
    PrintError(built.error, "--run takes last, all or a run number that every file has");
    return kExitBadInput;
  }
  Timeline& timeline = built.timeline;
  AlignOptions align;
  align.mode = options.clock_align;
  std::string clock_error;
  if (!ResolveMachines(options, timeline, &align, &clock_error) ||
      (!options.stage_order.empty() &&
       !ParseStageOrder(options.stage_order, timeline, &timeline.stage_order, &clock_error))) {
    PrintError(clock_error, "machines are named after their directories: " + MachineNames(timeline));
    return kExitUsage;
  }
  const ClockAlignment clocks = AlignClocks(timeline, align);
  StepFinding steps = FindSteps(timeline);
  skipped.Merge(steps.skipped);

  size_t jobs = 0;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) jobs += worker.jobs.size();

  std::string report;
  const bool normal = options.verbosity >= 1;
  if (options.verbosity >= 2) report += VerboseFileLines(scans, built.runs);
  if (normal) {
    report += "jobviz: read " + Plural(scans.size(), "file", "files") + " (" + FormatBytes(bytes) +
              ", " + Plural(lines, "line", "lines") + "): " + Plural(jobs, "job", "jobs") + " drawn, " +
              std::to_string(skipped.total()) + " skipped\n";
    report += RunsLine(built.runs, options.run);
    if (jobs > 0) {
      report += JobsLine(timeline);
      report += ClocksLines(timeline, clocks);
      report += StepsLine(timeline);
    }
  }
  AppendSkipReport(report, skipped);
  std::fputs(report.c_str(), stderr);
  if (normal) {
    for (const std::string& warning : built.warnings) PrintWarning(warning);
    for (const std::string& warning : clocks.warnings) PrintWarning(warning);
    for (const std::string& warning : steps.warnings) PrintWarning(warning);
  }

  if (jobs == 0) {
    PrintError("no job lines to draw in " + Plural(scans.size(), "file", "files") + " (" +
                   Plural(lines, "line", "lines") + " read)",
               "jobviz draws lines like 'Profiler Info: Job (3), type = forward, micro_batch_id = 2, "
               "job_start_time = ..., job_end_time = ...' (docs/workerlog-format.md)");
    return kExitBadInput;
  }

  TraceStats stats;
  if (!WriteTrace(options.output, true, timeline, &stats)) return kExitBadInput;
  if (normal) {
    std::string wrote = "jobviz: wrote " + (options.output == "-" ? std::string("the trace to standard output") : options.output);
    if (stats.overlap_lanes > 0)
      wrote += " (" + Plural(stats.overlap_lanes, "extra row", "extra rows") + " for overlapping jobs)";
    std::fprintf(stderr, "%s\n", wrote.c_str());
  }
  if (!options.no_chrome) {
    if (!WriteTrace(options.chrome_output, false, timeline, &stats)) return kExitBadInput;
    if (normal) std::fprintf(stderr, "jobviz: wrote %s (legacy Chrome trace)\n", options.chrome_output.c_str());
  }

  const int analysis_status = ReportAnalysis(options, timeline,
                                            RunCounts{scans.size(), lines, jobs, skipped.total()});
  if (analysis_status != kExitOk) return analysis_status;

  if (options.verbosity >= 2) {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const double total_seconds = std::chrono::duration<double>(Clock::now() - started).count();
    std::fprintf(stderr,
                 "jobviz: time: read+parse %.3f s (%.2f GB/s), total %.3f s; peak memory %.1f MB\n",
                 read_seconds, read_seconds > 0 ? static_cast<double>(bytes) / read_seconds / 1e9 : 0.0,
                 total_seconds, static_cast<double>(usage.ru_maxrss) / 1024.0);
  }
  return kExitOk;
}

}  // namespace jobviz
