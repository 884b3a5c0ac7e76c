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
    bool restarted = false;   // truncated or replaced: the records so far were dropped
    bool gone = false;        // deleted
    bool more = false;        // more bytes wait: poll again
    std::string error;        // it could not be read this time
  };
  // Reads up to `max_read` bytes of what was appended.
  Update Poll(const LineParser& parser, size_t max_read = FileFollower::kMaxRead);

  const std::string& path() const { return follower_.path(); }
  // Its descriptor closed while idle (FileFollower::Release).
  void Release() { follower_.Release(); }

 private:
  FileFollower follower_;
};

}  // namespace jobviz
