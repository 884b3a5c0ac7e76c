// One worker log as `jobviz follow` reads it: its records so far, parsed as
// whole lines arrive, with the same counts (lines, skipped lines and why)
// a batch run over the same bytes gives. Each appended line is parsed
// once; the records pile up until --keep-steps drops the old ones.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "parse/line_parser.h"
#include "parse/workerlog_scan.h"
#include "read/file_follower.h"

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

class FollowedLog {
 public:
  // `shown`: the file's name in messages and the outputs.
  FollowedLog(std::string path, std::string shown);

  struct Update {
    size_t records = 0;       // new records
    size_t jobs = 0;          // of them, finished jobs
    bool restarted = false;   // truncated or replaced: the records so far were dropped
    bool gone = false;        // deleted
    bool more = false;        // more bytes wait: poll again
    std::string error;        // it could not be read this time
  };
  // Reads up to `max_read` bytes of what was appended.
  Update Poll(const LineParser& parser, size_t max_read = FileFollower::kMaxRead);

  const WorkerLogScan& scan() const { return scan_; }
  const std::string& path() const { return follower_.path(); }
  // When it last grew by a whole line (or when it was first followed).
  std::chrono::steady_clock::time_point grew() const { return grew_; }

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
  // a truncated or replaced file starts over from its start.
  WorkerLogScan ScanFromCursor() const;

  static constexpr size_t kKeptClockSyncs = 64;

 private:
  FileFollower follower_;
  WorkerLogScan scan_;
  std::string lines_;  // reused between polls
  std::vector<size_t> kept_kinds_;  // indices of the records KeptAcrossCuts
  std::uint64_t cursor_line_ = 0;  // 0: from the start
  std::int64_t cursor_step_ = 0;
  std::chrono::steady_clock::time_point grew_ = std::chrono::steady_clock::now();
};

}  // namespace jobviz
