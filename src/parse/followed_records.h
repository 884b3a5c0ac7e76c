// The records of one worker's log as `jobviz follow` holds them while it
// grows, wherever they come from (a log it reads, parse/followed_log.h, or
// any other source of records a later follow may read): the scan
// so far, a cursor at the last step printed, and what --keep-steps drops.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "parse/workerlog_scan.h"

namespace jobviz {

// The records from line `cut` on, with what says where the rank sits and
// where runs begin (kept from before it) and the last kKeptClockSyncs
// clock-sync points before it; jobs, step markers and in-flight jobs
// before it go. `first_step`: the number of the step that starts at `cut`,
// kept in a profiler-window record before it, so that steps counted from
// job order keep their numbers.
// `kept_kinds`, when given, lists (ascending) the indices of the records of
// the kinds kept across a cut (KeptAcrossCuts): only those before the cut
// are looked at, so a copy from a cursor costs what is after it.
std::vector<LogRecord> RecordsFrom(const std::vector<LogRecord>& records, std::uint64_t cut, std::int64_t first_step,
                                   const std::vector<size_t>* kept_kinds = nullptr);
bool KeptAcrossCuts(RecordKind kind);

class FollowedRecords {
 public:
  explicit FollowedRecords(std::string shown);  // `shown`: the file's name in messages and the outputs

  const WorkerLogScan& scan() const { return scan_; }
  // When it last grew by a record (or when it was first followed).
  std::chrono::steady_clock::time_point grew() const { return grew_; }

  // New records and the file's figures so far (`part.lines`: every line up
  // to them; `part.bytes`: the bytes they came from). Returns the finished
  // jobs among them.
  size_t Append(WorkerLogScan part);
  // Finished jobs read since the file was first followed (or restarted),
  // dropped ones counted too: 0 for a rank whose log holds none yet.
  std::uint64_t jobs_read() const { return jobs_read_; }
  // Truncated or replaced: the records so far are void; a new run follows.
  void Restart();
  std::uint64_t restarts() const { return restarts_; }
  // The records so far, handed over and forgotten (extract --follow writes
  // them out as they come); the figures stay.
  std::vector<LogRecord> TakeRecords();
  // The file's figures as its source says (an events stream's totals line).
  void SetTotals(std::uint64_t bytes, std::uint64_t lines, SkipTally skipped, LogEnd end);
  void AddSkipped(SkippedLine skipped) {
    skipped_here_.Add(skipped);
    scan_.skipped.Add(std::move(skipped));
  }
  // What the file holds now, while a line is being written: an incomplete
  // line is not the end of the log.
  void NotCut() { scan_.end.cut_mid_line = false; }

  // --keep-steps: drops the records before line `cut` (RecordsFrom).
  // Returns how many records went.
  size_t DropBefore(std::uint64_t cut, std::int64_t first_step);

  // Where the steps not yet reported begin (a line, and its step's number):
  // what each turn builds, so that a turn's cost does not grow with the run.
  void SetCursor(std::uint64_t line, std::int64_t step) {
    cursor_line_ = line;
    cursor_step_ = step;
  }
  // A copy of the scan with the records from the cursor on (RecordsFrom);
  // a restarted file starts over from its start.
  WorkerLogScan ScanFromCursor() const;

  static constexpr size_t kKeptClockSyncs = 64;

 private:
  WorkerLogScan scan_;
  std::vector<size_t> kept_kinds_;  // indices of the records KeptAcrossCuts
  std::uint64_t cursor_line_ = 0;  // 0: from the start
  std::int64_t cursor_step_ = 0;
  std::uint64_t restarts_ = 0;
  std::uint64_t jobs_read_ = 0;
  SkipTally skipped_here_;  // skipped by Append and AddSkipped: SetTotals keeps them
  std::chrono::steady_clock::time_point grew_ = std::chrono::steady_clock::now();
};

}  // namespace jobviz
