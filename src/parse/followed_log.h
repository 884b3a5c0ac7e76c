// One worker log as `jobviz follow` reads it: whole lines as they are
// appended (read/file_follower.h), each parsed once, into its records
// (parse/followed_records.h), with the same counts (lines, skipped lines and
// why) a batch run over the same bytes gives.
#pragma once

#include <string>

#include "parse/followed_records.h"
#include "parse/line_parser.h"
#include "read/file_follower.h"

namespace jobviz {

class FollowedLog : public FollowedRecords {
 public:
  // `shown`: the file's name in messages and the outputs.
  FollowedLog(std::string path, std::string shown);

  struct Update {
    size_t records = 0;       // new records
    size_t jobs = 0;          // of them, finished jobs
    bool rotated = false;     // truncated or replaced: what follows is a new run or the log's next lines
    bool restarted = false;   // a new run began there: the records so far were dropped, lines count from 1
    bool gone = false;        // deleted
    bool more = false;        // more bytes wait: poll again
    std::string error;        // it could not be read this time
  };
  // Reads up to `max_read` bytes of what was appended.
  Update Poll(const LineParser& parser, size_t max_read = FileFollower::kMaxRead);

  const std::string& path() const { return follower_.path(); }
  static constexpr size_t kMaxRotatedBytes = 16 << 20;
  // Its descriptor closed while idle (FileFollower::Release).
  void Release() { follower_.Release(); }

 private:
  // One buffer per thread, not per log: 2,048 logs each keeping the most
  // they ever read held half a gigabyte.
  static std::string& thread_lines() {
    thread_local std::string lines;
    return lines;
  }
  void AppendRotated(const LineParser& parser, Update* update);

  FileFollower follower_;
  bool rotated_ = false;       // truncated or replaced: its next lines wait for a job line (AppendRotated)
  std::string rotated_lines_;  // those lines
};

}  // namespace jobviz
