#include "parse/followed_log.h"

#include <algorithm>

namespace jobviz {

FollowedLog::FollowedLog(std::string path, std::string shown) : follower_(std::move(path)) {
  scan_.file = std::move(shown);
}

FollowedLog::Update FollowedLog::Poll(const LineParser& parser, size_t max_read) {
  Update update;
  lines_.clear();
  const FileFollower::Change change = follower_.Poll(&lines_, max_read);
  update.more = follower_.more();
  switch (change) {
    case FileFollower::Change::kNone:
      break;
    case FileFollower::Change::kRestarted: {
      WorkerLogScan fresh;
      fresh.file = scan_.file;
      scan_ = std::move(fresh);
      cursor_line_ = 0;  // a new file: its steps are all to come
      update.restarted = true;
      break;
    }
    case FileFollower::Change::kGone:
      update.gone = true;
      break;
    case FileFollower::Change::kError:
      update.error = follower_.error();
      break;
    case FileFollower::Change::kAppended: {
      WorkerLogScan part = ScanAppendedLines(scan_.file, lines_, parser, scan_.lines);
      update.records = part.records.size();
      for (const LogRecord& r : part.records) update.jobs += r.kind == RecordKind::kJob;
      grew_ = std::chrono::steady_clock::now();
      scan_.records.insert(scan_.records.end(), std::make_move_iterator(part.records.begin()),
                           std::make_move_iterator(part.records.end()));
      scan_.skipped.Merge(part.skipped);
      scan_.lines = part.lines;
      scan_.bytes += part.bytes;
      scan_.end = std::move(part.end);
      break;
    }
  }
  if (follower_.cut_began()) {
    scan_.skipped.Add(SkippedLine{SkipReason::kOverlongLine, scan_.file, scan_.lines + 1, 0, "",
                                  "over " + std::to_string(FileFollower::kMaxHeldLine >> 20) +
                                      " MiB with no newline yet: dropped up to its newline"});
  }
  // What the file holds now, while a line is being written: an incomplete
  // line is not the end of the log.
  scan_.end.cut_mid_line = false;
  return update;
}

std::vector<LogRecord> RecordsFrom(const std::vector<LogRecord>& records, std::uint64_t cut, std::int64_t first_step) {
  const auto old = std::partition_point(records.begin(), records.end(),
                                        [cut](const LogRecord& r) { return r.line < cut; });
  size_t syncs_before = 0;
  for (auto it = records.begin(); it != old; ++it) syncs_before += it->kind == RecordKind::kClockSync;
  std::vector<LogRecord> kept;
  kept.reserve(static_cast<size_t>(records.end() - old) + 16);
  size_t syncs_seen = 0;
  bool window = false;
  for (auto it = records.begin(); it != old; ++it) {
    switch (it->kind) {
      case RecordKind::kStartBanner:
      case RecordKind::kHybridInfo:
      case RecordKind::kShimTopology:
      case RecordKind::kProfilerHeader:
        kept.push_back(*it);
        break;
      case RecordKind::kProfilerWindow:
        kept.push_back(*it);
        kept.back().step = first_step;  // the steps before it are gone
        window = true;
        break;
      case RecordKind::kClockSync:
        if (++syncs_seen + FollowedLog::kKeptClockSyncs > syncs_before) kept.push_back(*it);
        break;
      default:
        break;
    }
  }
  if (!window && old != records.begin() && cut > 1) {
    // Steps counted from job order count from the window's first step.
    LogRecord marker;
    marker.kind = RecordKind::kProfilerWindow;
    marker.line = cut - 1;
    marker.step = first_step;
    kept.push_back(marker);
  }
  kept.insert(kept.end(), old, records.end());
  return kept;
}

size_t FollowedLog::DropBefore(std::uint64_t cut, std::int64_t first_step) {
  const size_t before = scan_.records.size();
  scan_.records = RecordsFrom(scan_.records, cut, first_step);
  return before - std::min(before, scan_.records.size());
}

WorkerLogScan FollowedLog::ScanFromCursor() const {
  WorkerLogScan copy;
  copy.file = scan_.file;
  copy.bytes = scan_.bytes;
  copy.lines = scan_.lines;
  copy.end = scan_.end;
  copy.skipped = scan_.skipped;
  copy.read_error = scan_.read_error;
  copy.records = cursor_line_ > 0 ? RecordsFrom(scan_.records, cursor_line_, cursor_step_) : scan_.records;
  return copy;
}

}  // namespace jobviz
