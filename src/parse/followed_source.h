// What `jobviz follow` follows: the worker logs of a running job, as a batch
// run would see them now, from a log tree (parse/tree_follower.h) or from the
// open events streams of `jobviz extract --follow` on each machine
// (parse/event_streams.h, `jobviz merge --follow`).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "parse/followed_records.h"
#include "parse/line_parser.h"
#include "read/log_discovery.h"

namespace jobviz {

class FollowedSource {
 public:
  virtual ~FollowedSource() = default;

  struct Poll {
    size_t records = 0;              // new records in all files
    size_t jobs = 0;                 // of them, finished jobs
    size_t restarted = 0;            // logs where a new run began (their lines count from 1 again)
    std::vector<std::string> notes;  // what changed, to say once: a file found, restarted, deleted, unreadable
    bool more = false;               // bytes are waiting: poll again at once
  };
  // Reads what every source appended (a bounded slice each turn).
  virtual Poll PollAll(const LineParser& parser) = 0;

  // The files followed (machine, then worker order) and their records so far:
  // the input of the later stages.
  virtual const LogSet& logs() const = 0;
  virtual size_t size() const = 0;
  virtual FollowedRecords& log(size_t i) = 0;  // the records of logs().files[i]
  virtual const FollowedRecords& log(size_t i) const = 0;
  // The logs deleted (by name as shown) and not back: no step waits for them.
  virtual const std::set<std::string>& gone() const = 0;
  // An input named to be followed that has not yet given a log (a stream
  // of `extract --follow` with no file line yet, neither ended nor deleted):
  // no step is finished while one is waited for, since its machine's
  // workers may still be in them. The first such input, or "".
  virtual std::string Waited() const { return ""; }
  // The directories whose changes should wake the follower (inotify).
  virtual std::vector<std::string> Directories() const = 0;

  // Grows each time a log joins: the logs are put in order again, and the
  // cursors, set before it came, no longer meet at one step.
  std::uint64_t generation() const { return generation_; }

  // Each log's scan; `from_cursor`: its records from its cursor on
  // (FollowedRecords::SetCursor). On up to `threads` threads.
  std::vector<WorkerLogScan> Scans(bool from_cursor, int threads) const;
  // Each log's index by its name as shown (Worker::file).
  std::map<std::string, size_t> IndexByName() const;

 protected:
  std::uint64_t generation_ = 0;
};

}  // namespace jobviz
