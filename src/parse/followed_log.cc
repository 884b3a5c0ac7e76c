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

size_t FollowedLog::DropBefore(std::uint64_t cut, std::int64_t first_step) {
  std::vector<LogRecord>& records = scan_.records;
  const auto old = std::partition_point(records.begin(), records.end(),
                                        [cut](const LogRecord& r) { return r.line < cut; });
  size_t syncs_before = 0;
  for (auto it = records.begin(); it != old; ++it) syncs_before += it->kind == RecordKind::kClockSync;
  size_t syncs_seen = 0;
  bool window = false;
  const auto drop = [&](LogRecord& r) {
    switch (r.kind) {
      case RecordKind::kStartBanner:
      case RecordKind::kHybridInfo:
      case RecordKind::kShimTopology:
      case RecordKind::kProfilerHeader:
        return false;
      case RecordKind::kProfilerWindow:
        r.step = first_step;  // the steps before it are gone
        window = true;
        return false;
      case RecordKind::kClockSync:
        return ++syncs_seen + kKeptClockSyncs <= syncs_before;
      default:
        return true;
    }
  };
  const auto kept_end = std::remove_if(records.begin(), old, drop);
  const size_t dropped = static_cast<size_t>(old - kept_end);
  records.erase(kept_end, old);
  if (!window && dropped > 0 && cut > 1) {
    LogRecord marker;
    marker.kind = RecordKind::kProfilerWindow;
    marker.line = cut - 1;
    marker.step = first_step;
    const auto at = std::partition_point(records.begin(), records.end(),
                                         [cut](const LogRecord& r) { return r.line < cut - 1; });
    records.insert(at, marker);
  }
  return dropped;
}

}  // namespace jobviz
