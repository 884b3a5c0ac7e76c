#include "model/run_splitter.h"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace jobviz {

std::string Minutes(Nanos gap) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f min", static_cast<double>(gap) / 60e9);
  return text;
}

namespace {

constexpr size_t kWritersKept = 8;

template <typename T>
void AddUnique(std::vector<T>& values, T value) {
  if (values.size() < kWritersKept && std::find(values.begin(), values.end(), value) == values.end())
    values.push_back(value);
}

// libjobviz's processes, told apart by their start lines ("jobviz profiler:
// rank = R") and the glog threads of their lines: a process writes its
// start line from the thread that made the profiler, its job lines from its
// writer thread and, at Shutdown, from the thread that called it (often the
// first). Two write at once when
//  - a thread of a process started before the latest start line (its start
//    line's thread, or one that wrote its job lines) writes job lines after
//    it (a restarted process's predecessor never writes again);
//  - or start lines of two ranks came before any job, and the job lines'
//    threads then take turns again and again (each process's lines come in
//    blocks as its buffer flushes; one process alone changes thread once,
//    at its Shutdown).
class JobThreads {
 public:
  static constexpr int kTurns = 3;  // a thread coming back this often: blocks of two writers
  std::vector<std::uint32_t> writers;  // the threads of the turns seen (the first few)

  void Header(std::int64_t rank, std::uint32_t thread) {
    for (const std::uint32_t earlier : process_)  // the threads of the processes started before
      if (earlier_.size() < kWritersKept) earlier_.push_back(earlier);
    process_.clear();
    if (thread != 0) process_.push_back(thread);
    job_threads_.clear();
    if (jobs_since_header_ == 0 && !header_ranks_.empty() && header_ranks_.back() != rank) started_together_ = true;
    if (header_ranks_.size() < kWritersKept) header_ranks_.push_back(rank);
    jobs_since_header_ = 0;
  }
  // True at the job line that shows two writers.
  bool Job(std::uint32_t thread) {
    if (header_ranks_.empty() || thread == 0) return false;
    ++jobs_since_header_;
    if (Has(earlier_, thread)) {
      AddUnique(writers, thread);
      return true;
    }
    if (thread != last_ && last_ != 0) {
      if (Has(job_threads_, thread)) ++turns_;
      AddUnique(writers, last_);
      AddUnique(writers, thread);
    }
    if (!Has(job_threads_, thread) && job_threads_.size() < kWritersKept) job_threads_.push_back(thread);
    if (!Has(process_, thread) && process_.size() < kWritersKept) process_.push_back(thread);
    last_ = thread;
    return started_together_ && turns_ >= kTurns;
  }

 private:
  static bool Has(const std::vector<std::uint32_t>& threads, std::uint32_t thread) {
    return std::find(threads.begin(), threads.end(), thread) != threads.end();
  }
  std::vector<std::int64_t> header_ranks_;
  std::vector<std::uint32_t> earlier_;      // threads of processes started before the latest start line
  std::vector<std::uint32_t> process_;      // the latest start line's thread and the job threads since
  std::vector<std::uint32_t> job_threads_;  // job threads since the latest start line
  std::uint32_t last_ = 0;
  size_t jobs_since_header_ = 0;
  int turns_ = 0;
  bool started_together_ = false;
};

}  // namespace

SharedWriters FindSharedWriters(const std::vector<LogRecord>& records) {
  SharedWriters found;
  struct Counter {  // the highest step and round a glog thread has written
    std::uint32_t thread;
    std::int64_t step = -1, round = -1;
  };
  std::vector<Counter> counters;       // few threads write steps or rounds: a short list
  std::vector<std::uint32_t> overtaken;  // threads another thread counted again after
  std::uint64_t counted_again_line = 0;
  std::optional<std::int64_t> last_rank;       // of the last clock-sync or topology line
  std::optional<std::int64_t> last_sync_rank;  // of the last clock-sync line
  Nanos latest = 0;                            // the latest time any line gave so far
  JobThreads job_threads;
  for (const LogRecord& r : records) {
    if (r.kind == RecordKind::kProfilerHeader) {
      AddUnique(found.ranks, r.rank);
      if (r.log_shared && found.line == 0) found.line = r.line;  // libjobviz's lock said so
      job_threads.Header(r.rank, r.thread);
    }
    if (r.kind == RecordKind::kJob && found.line == 0 && job_threads.Job(r.thread)) {
      found.line = r.line;
      for (const std::uint32_t thread : job_threads.writers) AddUnique(found.threads, thread);
    }
    if (r.kind == RecordKind::kClockSync || IsTopologyRecord(r)) {
      // A rank that comes back after another rank wrote: both write at once
      // (a restart under another rank never goes back). Needs no thread ids.
      if (found.line == 0 && last_rank && r.rank != *last_rank &&
          std::find(found.ranks.begin(), found.ranks.end(), r.rank) != found.ranks.end())
        found.line = r.line;
      // Another rank's sync point before times already written: the two ran
      // at once (each process buffers its lines, so one's block can follow
      // the other's whole); a restart under another rank comes later.
      if (found.line == 0 && r.kind == RecordKind::kClockSync && last_sync_rank && r.rank != *last_sync_rank &&
          r.start < latest)
        found.line = r.line;
      AddUnique(found.ranks, r.rank);
      last_rank = r.rank;
      if (r.kind == RecordKind::kClockSync) last_sync_rank = r.rank;
    }
    if (r.kind == RecordKind::kJob || r.kind == RecordKind::kClockSync || r.kind == RecordKind::kStepPush ||
        r.kind == RecordKind::kStepPop)
      latest = std::max({latest, r.start, r.end});
    if (r.thread == 0) continue;
    if (found.line == 0 && std::find(overtaken.begin(), overtaken.end(), r.thread) != overtaken.end())
      found.line = counted_again_line;  // the thread counted past goes on writing: two writers
    const bool step = r.kind == RecordKind::kStepPush, round = r.kind == RecordKind::kClockSync;
    if (!step && !round) continue;
    AddUnique(found.threads, r.thread);
    const std::int64_t value = step ? r.step : r.round;
    for (const Counter& other : counters)
      if (other.thread != r.thread && value <= (step ? other.step : other.round) &&
          std::find(overtaken.begin(), overtaken.end(), other.thread) == overtaken.end() &&
          overtaken.size() < kWritersKept) {
        overtaken.push_back(other.thread);
        if (counted_again_line == 0) counted_again_line = r.line;
      }
    auto mine = std::find_if(counters.begin(), counters.end(), [&](const Counter& c) { return c.thread == r.thread; });
    if (mine == counters.end()) {
      if (counters.size() == kWritersKept) continue;
      counters.push_back({r.thread});
      mine = counters.end() - 1;
    }
    (step ? mine->step : mine->round) = std::max(step ? mine->step : mine->round, value);
  }
  if (found.line == 0) return {};
  std::sort(found.threads.begin(), found.threads.end());
  std::sort(found.ranks.begin(), found.ranks.end());
  return found;
}

std::vector<RunRange> SplitRuns(const std::vector<LogRecord>& records, bool shared_writers) {
  std::vector<RunRange> runs;
  bool has_activity = false;  // the current run holds a job, step or sync line
  std::optional<std::int64_t> highest_step, highest_round;
  std::optional<Nanos> latest_job_end;  // of the current run, in file order
  std::uint32_t job_thread = 0;         // glog thread of the run's last job line
  std::optional<size_t> banner;         // a banner after jobs, waiting for the next job line to tell
  const LogRecord* header = nullptr;    // libjobviz's last start line in the file

  auto start_run = [&](size_t index, std::string why) {
    if (!runs.empty()) runs.back().end = index;
    RunRange& run = runs.emplace_back();  // what it does not say here, as RunRange sets it
    run.begin = index;
    run.end = records.size();
    run.first_line = records[index].line;
    run.started_by = std::move(why);
    has_activity = false;
    highest_step.reset();
    highest_round.reset();
    latest_job_end.reset();
    job_thread = 0;
    banner.reset();
  };

  for (size_t i = 0; i < records.size(); ++i) {
    const LogRecord& r = records[i];
    if (runs.empty()) start_run(i, "");
    switch (r.kind) {
      case RecordKind::kProfilerWindow:  // (from the banner before it, if one was printed again)
        if (has_activity && !shared_writers) start_run(banner.value_or(i), "profiler start line after jobs");
        break;
      case RecordKind::kStartBanner:
        if (has_activity && !banner) banner = i;
        break;
      case RecordKind::kInFlight:  // the watchdog's word on a job of this run: no run starts here
        break;
      case RecordKind::kProfilerHeader:  // also read by FindSharedWriters (two ranks at once)
        if (header && header->rank != r.rank && !shared_writers) {
          if (has_activity)
            start_run(i, "libjobviz's start line of rank " + std::to_string(r.rank) + " after rank " +
                             std::to_string(header->rank) + "'s at line " + std::to_string(header->line) +
                             ": two ranks wrote this log one after the other");
          RunRange& run = runs.back();
          run.rank_line = r.line;
          run.rank = r.rank;
          run.other_rank_line = header->line;
          run.other_rank = header->rank;
        }
        header = &r;
        break;
      case RecordKind::kStepPush:
        if (highest_step && r.step <= *highest_step && !shared_writers)
          start_run(i, "step " + std::to_string(r.step) + " pushed again");
        highest_step = r.step;
        has_activity = true;
        break;
      case RecordKind::kClockSync:
        // Not activity for the rule above: sync rounds may come right
        // before the window line of the same run.
        if (highest_round && r.round <= *highest_round && !shared_writers)
          start_run(i, "clock sync round " + std::to_string(r.round) + " taken again");
        highest_round = r.round;
        break;
      case RecordKind::kJob:
        if (banner) {  // the first job line after a banner printed again: a new process, or the same one going on?
          const size_t at = *banner;
          banner.reset();
          const bool new_thread = job_thread != 0 && r.thread != 0 && r.thread != job_thread && !shared_writers;
          const bool no_threads = job_thread == 0 || r.thread == 0;
          const bool long_after = latest_job_end && r.start - *latest_job_end > kRestartGap && !shared_writers;
          if (new_thread) {
            start_run(at, "start-up banner ('GPU Compute Capability') printed again after jobs, and the jobs after it come "
                          "from another glog thread (" + std::to_string(job_thread) + " -> " + std::to_string(r.thread) + ")");
          } else if (no_threads && long_after) {
            start_run(at, "start-up banner ('GPU Compute Capability') printed again after jobs, and the next job starts " +
                              Minutes(r.start - *latest_job_end) + " after the last one ended");
          } else {
            runs.back().notes.push_back("line " + std::to_string(records[at].line) +
                                        ": start-up banner printed again (a child process?); not a new run: the jobs go on" +
                                        (no_threads ? "" : " in glog thread " + std::to_string(r.thread)));
          }
        }
        // Neither alone is a restart (a checkpoint or an evaluation pauses
        // for minutes; a framework may print from another thread), both at
        // once are: a new process, minutes later.
        if (latest_job_end && r.start - *latest_job_end > kRestartGap && job_thread != 0 && r.thread != 0 &&
            r.thread != job_thread && !shared_writers)
          start_run(i, "job times jump " + Minutes(r.start - *latest_job_end) + " forward and the glog thread id changes (" +
                           std::to_string(job_thread) + " -> " + std::to_string(r.thread) + ")");
        // Times going back by minutes in file order are the clock set back,
        // not a restart (which comes later, not earlier): noted for a warning.
        if (latest_job_end && *latest_job_end - r.end > kRestartGap && runs.back().clock_back_line == 0) {
          runs.back().clock_back_line = r.line;
          runs.back().clock_back = *latest_job_end - r.end;
        }
        latest_job_end = std::max(latest_job_end.value_or(r.end), r.end);
        ++runs.back().jobs;
        if (r.thread != 0) job_thread = r.thread;
        has_activity = true;
        break;
      case RecordKind::kStepPop:
      case RecordKind::kRangePush:
        has_activity = true;
        break;
      case RecordKind::kHybridInfo:  // printed at start-up, before the run's window line
      case RecordKind::kShimTopology:
        break;
    }
  }
  return runs;
}

bool Drawn(const RunChoice& choice, size_t r, size_t runs) {
  switch (choice.kind) {
    case RunChoice::Kind::kAll: return true;
    case RunChoice::Kind::kLast: return r + 1 == runs;
    case RunChoice::Kind::kNumber: return static_cast<std::int64_t>(r + 1) == choice.number;
  }
  return false;
}

size_t JobsNotDrawn(const std::vector<RunRange>& runs, const RunChoice& choice) {
  size_t total = 0;
  for (size_t r = 0; r < runs.size(); ++r)
    if (!Drawn(choice, r, runs.size())) total += runs[r].jobs;
  return total;
}

}  // namespace jobviz
