#include "parse/followed_records.h"

#include <algorithm>

namespace jobviz {

bool KeptAcrossCuts(RecordKind kind) {
  switch (kind) {
    case RecordKind::kStartBanner:
    case RecordKind::kHybridInfo:
    case RecordKind::kShimTopology:
    case RecordKind::kProfilerHeader:
    case RecordKind::kProfilerWindow:
    case RecordKind::kClockSync:
      return true;
    default:
      return false;
  }
}

std::vector<LogRecord> RecordsFrom(const std::vector<LogRecord>& records, std::uint64_t cut, std::int64_t first_step,
                                   const std::vector<size_t>* kept_kinds) {
  const auto old = std::partition_point(records.begin(), records.end(),
                                        [cut](const LogRecord& r) { return r.line < cut; });
  // The records before the cut that may be kept: all of them looked at, or
  // only those `kept_kinds` lists.
  std::vector<size_t> before;
  const size_t old_index = static_cast<size_t>(old - records.begin());
  if (kept_kinds) {
    for (size_t i : *kept_kinds) {
      if (i >= old_index) break;
      before.push_back(i);
    }
  } else {
    for (size_t i = 0; i < old_index; ++i)
      if (KeptAcrossCuts(records[i].kind)) before.push_back(i);
  }
  size_t syncs_before = 0;
  for (size_t i : before) syncs_before += records[i].kind == RecordKind::kClockSync;
  std::vector<LogRecord> kept;
  kept.reserve(static_cast<size_t>(records.end() - old) + before.size() + 1);
  size_t syncs_seen = 0;
  bool window = false;
  for (size_t i : before) {
    const auto it = records.begin() + static_cast<std::ptrdiff_t>(i);
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
        kept.back().cursor = true;
        window = true;
        break;
      case RecordKind::kClockSync:
        if (++syncs_seen + FollowedRecords::kKeptClockSyncs > syncs_before) kept.push_back(*it);
        break;
      default:
        break;
    }
  }
  if (!window && old_index > 0 && cut > 1) {
    // Steps counted from job order count from the window's first step.
    LogRecord marker;
    marker.kind = RecordKind::kProfilerWindow;
    marker.line = cut - 1;
    marker.step = first_step;
    marker.cursor = true;
    kept.push_back(marker);
  }
  kept.insert(kept.end(), old, records.end());
  return kept;
}

FollowedRecords::FollowedRecords(std::string shown) { scan_.file = std::move(shown); }

size_t FollowedRecords::Append(WorkerLogScan part) {
  size_t jobs = 0;
  for (size_t i = 0; i < part.records.size(); ++i) {
    if (KeptAcrossCuts(part.records[i].kind)) kept_kinds_.push_back(scan_.records.size() + i);
    jobs += part.records[i].kind == RecordKind::kJob;
  }
  if (!part.records.empty()) grew_ = std::chrono::steady_clock::now();
  scan_.records.insert(scan_.records.end(), std::make_move_iterator(part.records.begin()),
                       std::make_move_iterator(part.records.end()));
  skipped_here_.Merge(part.skipped);
  scan_.skipped.Merge(part.skipped);
  scan_.lines = part.lines;
  scan_.bytes += part.bytes;
  // A piece with no job line keeps the end lines seen before it (its own
  // tail holds only its text); one with jobs says anew.
  const LogEnd before = std::move(scan_.end);
  scan_.end = std::move(part.end);
  if (jobs == 0) {
    scan_.end.closed_line = std::max(scan_.end.closed_line, before.closed_line);
    scan_.end.training_completed_line = std::max(scan_.end.training_completed_line, before.training_completed_line);
  }
  jobs_read_ += jobs;
  return jobs;
}

std::vector<LogRecord> FollowedRecords::TakeRecords() {
  std::vector<LogRecord> taken;
  taken.swap(scan_.records);
  kept_kinds_.clear();
  return taken;
}

void FollowedRecords::Restart() {
  ++restarts_;
  jobs_read_ = 0;
  skipped_here_ = SkipTally{};
  WorkerLogScan fresh;
  fresh.file = scan_.file;
  scan_ = std::move(fresh);
  kept_kinds_.clear();
  cursor_line_ = 0;  // a new file: its steps are all to come
}

void FollowedRecords::SetTotals(std::uint64_t bytes, std::uint64_t lines, SkipTally skipped, LogEnd end) {
  scan_.bytes = bytes;
  scan_.lines = lines;
  scan_.skipped = std::move(skipped);
  scan_.skipped.Merge(skipped_here_);  // the source's own lines skipped since (a stream's bad records)
  scan_.end = std::move(end);
}

size_t FollowedRecords::DropBefore(std::uint64_t cut, std::int64_t first_step) {
  const size_t before = scan_.records.size();
  scan_.records = RecordsFrom(scan_.records, cut, first_step, &kept_kinds_);
  kept_kinds_.clear();
  for (size_t i = 0; i < scan_.records.size(); ++i)
    if (KeptAcrossCuts(scan_.records[i].kind)) kept_kinds_.push_back(i);
  return before - std::min(before, scan_.records.size());
}

WorkerLogScan FollowedRecords::ScanFromCursor() const {
  WorkerLogScan copy;
  copy.file = scan_.file;
  copy.bytes = scan_.bytes;
  copy.lines = scan_.lines;
  copy.end = scan_.end;
  copy.skipped = scan_.skipped;
  copy.read_error = scan_.read_error;
  copy.records = cursor_line_ > 0 ? RecordsFrom(scan_.records, cursor_line_, cursor_step_, &kept_kinds_) : scan_.records;
  return copy;
}

}  // namespace jobviz
