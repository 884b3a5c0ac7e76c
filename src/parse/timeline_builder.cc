#include "parse/timeline_builder.h"

#include <algorithm>
#include <optional>

namespace jobviz {

namespace {

// In-flight lines that still stand: the latest per job, and none that a job
// line later ended (the same type and micro-batch, starting no earlier).
void KeepOpenJobs(Worker* worker) {
  std::vector<InFlightJob>& open = worker->in_flight;
  if (open.empty()) return;
  std::stable_sort(open.begin(), open.end(), [](const InFlightJob& a, const InFlightJob& b) {
    return std::make_tuple(a.type.index(), a.micro_batch, a.start, a.seen) <
           std::make_tuple(b.type.index(), b.micro_batch, b.start, b.seen);
  });
  std::vector<InFlightJob> kept;
  for (size_t i = 0; i < open.size(); ++i) {
    if (i + 1 < open.size() && open[i + 1].type == open[i].type && open[i + 1].micro_batch == open[i].micro_batch &&
        open[i + 1].start == open[i].start)
      continue;  // the watchdog wrote again for the same job: the latest stands
    const auto from = std::lower_bound(worker->jobs.begin(), worker->jobs.end(), open[i].start,
                                       [](const Job& job, Nanos t) { return job.start < t; });
    const bool ended = std::any_of(from, worker->jobs.end(), [&](const Job& job) {
      return job.type == open[i].type && job.micro_batch == open[i].micro_batch;
    });
    if (!ended) kept.push_back(open[i]);
  }
  open = std::move(kept);
}

Worker MakeWorker(const WorkerLogFile& file, WorkerLogScan& scan, size_t begin, size_t end) {
  Worker worker;
  worker.machine = file.machine;
  worker.index = file.worker;
  worker.file = scan.file;
  size_t jobs = 0;
  for (size_t i = begin; i < end; ++i) jobs += scan.records[i].kind == RecordKind::kJob;
  worker.jobs.reserve(jobs);
  for (size_t i = begin; i < end; ++i) {
    LogRecord& r = scan.records[i];
    if (r.kind == RecordKind::kInFlight) {
      worker.in_flight.push_back({r.job_id, r.type, r.micro_batch, r.start, r.end, r.line, r.started});
      continue;
    }
    if (r.kind != RecordKind::kJob) {
      worker.markers.push_back(std::move(r));
      continue;
    }
    worker.jobs.push_back({r.job_id, r.type, r.micro_batch, r.start, r.end, r.line, kNoStep});
  }
  // A log is written in time order but for the odd job that ends late, so
  // one pass usually finds the jobs sorted already.
  if (!std::is_sorted(worker.jobs.begin(), worker.jobs.end(), StartsBefore))
    std::sort(worker.jobs.begin(), worker.jobs.end(), StartsBefore);
  KeepOpenJobs(&worker);
  return worker;
}

}  // namespace

namespace {

// "workerlog.0:41 (glog threads 1130 and 1131; ranks 0 and 1)": what the file says of its writers
std::string DescribeSharedWriters(const std::string& file, const SharedWriters& shared) {
  auto list = [](const auto& values) {
    std::string text;
    for (size_t i = 0; i < values.size(); ++i)
      text += (i == 0 ? "" : i + 1 == values.size() ? " and " : ", ") + std::to_string(values[i]);
    return text;
  };
  std::string who;
  if (!shared.threads.empty()) who = "glog threads " + list(shared.threads);
  if (!shared.ranks.empty())
    who += (who.empty() ? "" : "; ") + std::string(shared.ranks.size() == 1 ? "rank " : "ranks ") + list(shared.ranks);
  return file + ":" + std::to_string(shared.line) + (who.empty() ? "" : " (" + who + ")");
}

}  // namespace


FileBuild BuildFile(const WorkerLogFile& file, WorkerLogScan& scan, const RunChoice& choice) {
  FileBuild build;
  build.shared = FindSharedWriters(scan.records);
  build.runs = SplitRuns(scan.records, build.shared.line != 0);
  const std::vector<RunRange>& runs = build.runs;
  size_t begin = 0, end = 0;
  if (!runs.empty()) {
    switch (choice.kind) {
      case RunChoice::Kind::kLast:
        begin = runs.back().begin;
        end = runs.back().end;
        break;
      case RunChoice::Kind::kAll:
        begin = 0;
        end = scan.records.size();
        break;
      case RunChoice::Kind::kNumber:
        if (choice.number < 1 || static_cast<size_t>(choice.number) > runs.size()) {
          build.error = scan.file + ": has " + std::to_string(runs.size()) + (runs.size() == 1 ? " run" : " runs") +
                        ", no run " + std::to_string(choice.number);
          return build;
        }
        begin = runs[choice.number - 1].begin;
        end = runs[choice.number - 1].end;
        break;
    }
  }
  // A topology line is printed once at start-up, possibly before the line
  // that opens the run (a profiler window line): the latest one before the
  // run's end says where this rank sits in it.
  std::optional<LogRecord> earlier_place;
  if (std::none_of(scan.records.begin() + begin, scan.records.begin() + end, IsTopologyRecord))
    for (size_t i = begin; i-- > 0;)
      if (IsTopologyRecord(scan.records[i])) {
        earlier_place = scan.records[i];
        break;
      }
  for (size_t r = 0; r < runs.size(); ++r)
    if (Drawn(choice, r, runs.size()) && runs[r].clock_back_line != 0 && build.clock_back_line == 0) {
      build.clock_back_line = runs[r].clock_back_line;
      build.clock_back = runs[r].clock_back;
    }
  build.worker = MakeWorker(file, scan, begin, end);
  if (earlier_place) build.worker.markers.insert(build.worker.markers.begin(), *earlier_place);
  if (runs.empty() || Drawn(choice, runs.size() - 1, runs.size())) build.worker.end = std::move(scan.end);
  if (choice.kind == RunChoice::Kind::kAll && runs.size() > 1) {
    build.worker.run_starts.push_back(0);
    for (size_t r = 1; r < runs.size(); ++r) build.worker.run_starts.push_back(runs[r].first_line);
  }
  scan.records.clear();  // taken: its jobs are the worker's now (the capacity goes back to the scan, scan_logs.cc)
  return build;
}

BuildResult AssembleTimeline(const LogSet& logs, std::vector<FileBuild> files) {
  BuildResult result;
  for (const std::string& name : logs.machine_names) result.timeline.machines.emplace_back(name);
  // Sized first: at 131,072 workers, moving the workers as the vectors grew
  // was a tenth of a second with every other thread idle.
  std::vector<size_t> workers_of(result.timeline.machines.size(), 0);
  for (const WorkerLogFile& file : logs.files) ++workers_of[static_cast<size_t>(file.machine)];
  for (size_t m = 0; m < workers_of.size(); ++m) result.timeline.machines[m].workers.reserve(workers_of[m]);
  result.runs.reserve(logs.files.size());
  size_t most_runs = 0, fewest_runs = SIZE_MAX;
  std::string clock_back;  // the first file whose clock was set back
  size_t clock_back_files = 0;
  std::string shared;  // the first file that several processes wrote
  size_t shared_files = 0;
  std::string ranks;  // the first file that two ranks wrote one after the other
  size_t ranks_files = 0;
  for (size_t f = 0; f < logs.files.size(); ++f) {
    FileBuild& file = files[f];
    if (!file.error.empty()) {
      result.error = file.error;
      return result;
    }
    if (file.clock_back_line != 0 && clock_back_files++ == 0)
      clock_back = file.worker.file + ":" + std::to_string(file.clock_back_line) + " by " + Minutes(file.clock_back);
    if (file.shared.line != 0 && shared_files++ == 0) shared = DescribeSharedWriters(file.worker.file, file.shared);
    const auto other_rank = std::find_if(file.runs.begin(), file.runs.end(), [](const RunRange& r) { return r.rank_line != 0; });
    if (other_rank != file.runs.end() && ranks_files++ == 0)
      ranks = file.worker.file + ":" + std::to_string(other_rank->other_rank_line) + " (rank " +
              std::to_string(other_rank->other_rank) + ") and " + file.worker.file + ":" +
              std::to_string(other_rank->rank_line) + " (rank " + std::to_string(other_rank->rank) + ")";
    most_runs = std::max(most_runs, file.runs.size());
    fewest_runs = std::min(fewest_runs, file.runs.size());
    result.runs.push_back({file.worker.file, std::move(file.runs)});
    result.timeline.machines[logs.files[f].machine].workers.push_back(std::move(file.worker));
  }
  if (clock_back_files > 0)
    result.warnings.push_back("job times go back in file order (the clock was set back: an NTP step?) in " +
                              std::to_string(clock_back_files) + (clock_back_files == 1 ? " file" : " files") + ", first " +
                              clock_back + kDrawnAsLogged);
  if (shared_files > 0)
    result.warnings.push_back(std::to_string(shared_files) + (shared_files == 1 ? " file was" : " files were") +
                              " written by several processes at once (ranks given the same log path?), first " + shared +
                              "; all their jobs are drawn, as one worker per file, and no run is split off there. Give "
                              "each rank its own log");
  if (ranks_files > 0)
    result.warnings.push_back(std::to_string(ranks_files) + (ranks_files == 1 ? " file was" : " files were") +
                              " written by two ranks one after the other (ranks given the same log path?), first " +
                              ranks + "; each rank's part is a run of its own (--run N, --run all). Give each rank "
                              "its own log");
  if (!logs.files.empty() && most_runs != fewest_runs)
    result.warnings.push_back("files hold different numbers of runs (" +
                              std::to_string(fewest_runs) + " to " + std::to_string(most_runs) +
                              "); runs are chosen per file");
  return result;
}

BuildResult BuildTimeline(const LogSet& logs, std::vector<WorkerLogScan>& scans, const RunChoice& choice) {
  std::vector<FileBuild> files;
  for (size_t f = 0; f < logs.files.size(); ++f) {
    files.push_back(BuildFile(logs.files[f], scans[f], choice));
    std::vector<LogRecord>().swap(scans[f].records);  // no scan to hand the capacity to: free it
  }
  return AssembleTimeline(logs, std::move(files));
}

}  // namespace jobviz
