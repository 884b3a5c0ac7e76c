#include "parse/followed_log.h"

namespace jobviz {

FollowedLog::FollowedLog(std::string path, std::string shown) : FollowedRecords(std::move(shown)), follower_(std::move(path)) {}

FollowedLog::Update FollowedLog::Poll(const LineParser& parser, size_t max_read) {
  Update update;
  // One buffer per thread, not per log: 2,048 logs each keeping the most
  // they ever read held half a gigabyte.
  thread_local std::string lines;
  lines.clear();
  const FileFollower::Change change = follower_.Poll(&lines, max_read);
  update.more = follower_.more();
  switch (change) {
    case FileFollower::Change::kNone:
      break;
    case FileFollower::Change::kRestarted:
      Restart();
      update.restarted = true;
      break;
    case FileFollower::Change::kGone:
      update.gone = true;
      break;
    case FileFollower::Change::kError:
      update.error = follower_.error();
      break;
    case FileFollower::Change::kAppended: {
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
