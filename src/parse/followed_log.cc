#include "parse/followed_log.h"

#include <algorithm>

#include "model/run_splitter.h"

namespace jobviz {

FollowedLog::FollowedLog(std::string path, std::string shown) : FollowedRecords(std::move(shown)), follower_(std::move(path)) {}

namespace {

// Whether `added`, after `before` in one file, begins a run of its own by
// the restart rules (model/run_splitter.h), as a batch run over the rotated
// file and the new one, one after the other, would say.
bool BeginsNewRun(const std::vector<LogRecord>& before, const std::vector<LogRecord>& added) {
  std::vector<LogRecord> both;
  both.reserve(before.size() + added.size());
  both.insert(both.end(), before.begin(), before.end());
  both.insert(both.end(), added.begin(), added.end());
  const std::vector<RunRange> runs = SplitRuns(both, FindSharedWriters(both).line != 0);
  return !runs.empty() && runs.back().begin >= before.size() && !before.empty();
}

}  // namespace

// The lines of a file truncated or replaced wait for its first job line
// (or 16 MiB): a new run by the restart rules (a restarted job: its clock
// sync rounds, profiler start line or banner counted again) starts the log
// over, numbered from line 1, as before; anything else (log rotation: the
// same run writing on) is the log's next lines, numbered on after those
// read, and the steps go on.
void FollowedLog::AppendRotated(const LineParser& parser, Update* update) {
  rotated_lines_ += thread_lines();
  WorkerLogScan part = ScanAppendedLines(scan().file, rotated_lines_, parser, scan().lines);
  const bool job = std::any_of(part.records.begin(), part.records.end(),
                               [](const LogRecord& r) { return r.kind == RecordKind::kJob; });
  if (!job && rotated_lines_.size() < kMaxRotatedBytes) return;
  if (BeginsNewRun(scan().records, part.records)) {
    Restart();
    update->restarted = true;
    part = ScanAppendedLines(scan().file, rotated_lines_, parser, 0);
  }
  rotated_ = false;
  std::string().swap(rotated_lines_);
  update->records = part.records.size();
  update->jobs = Append(std::move(part));
}

FollowedLog::Update FollowedLog::Poll(const LineParser& parser, size_t max_read) {
  Update update;
  std::string& lines = thread_lines();
  lines.clear();
  const FileFollower::Change change = follower_.Poll(&lines, max_read);
  update.more = follower_.more();
  switch (change) {
    case FileFollower::Change::kNone:
      break;
    case FileFollower::Change::kRestarted:
      // Rotated (copytruncate, or renamed away and created again), or
      // rewritten by a restarted job: which, its first job line tells.
      rotated_ = true;
      rotated_lines_.clear();
      update.rotated = true;
      break;
    case FileFollower::Change::kGone:
      update.gone = true;
      break;
    case FileFollower::Change::kError:
      update.error = follower_.error();
      break;
    case FileFollower::Change::kAppended: {
      if (rotated_) {
        AppendRotated(parser, &update);
        break;
      }
      WorkerLogScan part = ScanAppendedLines(scan().file, lines, parser, scan().lines);
      update.records = part.records.size();
      update.jobs = Append(std::move(part));
      break;
    }
  }
  if (follower_.cut_began()) {
    AddSkipped(SkippedLine{SkipReason::kOverlongLine, scan().file, scan().lines + 1, 0, "",
                           "over " + std::to_string(FileFollower::kMaxHeldLine >> 20) +
                               " MiB with no newline yet: dropped up to its newline"});
  }
  NotCut();
  return update;
}

}  // namespace jobviz
