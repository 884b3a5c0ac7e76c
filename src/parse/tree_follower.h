// The logs of a run as `jobviz follow` reads them: the files of --log_dir
// (and its machine directories with --multi_machine), or the files named,
// found again on every poll as they appear, each followed as it grows
// (parse/followed_log.h). A file once read stays in the run when it is
// deleted: what it said stays true.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "parse/followed_log.h"
#include "parse/followed_source.h"
#include "read/log_discovery.h"

namespace jobviz {

class TreeFollower : public FollowedSource {
 public:
  // `log_dir` and `multi_machine`, or `files`; `devices` as for a batch run.
  TreeFollower(std::string log_dir, bool multi_machine, std::vector<int> devices, std::vector<std::string> files,
               int threads);

  // Looks for new files, then reads what every file appended: up to
  // kTurnBytes in all (and at least kFileBytes a file), so that a turn's
  // records stay bounded however far behind the logs are.
  Poll PollAll(const LineParser& parser) override;
  static constexpr size_t kTurnBytes = 32 << 20, kFileBytes = 256 << 10;
  // Logs kept open between turns at most: half the descriptors the process
  // may open (ulimit -n), 16 to 1,024; the others are closed after each read
  // and looked at by path (FileFollower::Release), those that grew most
  // lately kept open. 100,000 logs are followed under ulimit -n 1024.
  static size_t MaxOpenLogs();

  const LogSet& logs() const override { return logs_; }
  const std::set<std::string>& gone() const override { return gone_; }
  std::vector<std::string> Directories() const override;
  // The followed log of logs().files[i].
  FollowedLog& log(size_t i) override { return *followed_[i]; }
  const FollowedLog& log(size_t i) const override { return *followed_[i]; }
  size_t size() const override { return followed_.size(); }

 private:
  void Discover(std::vector<std::string>* notes);
  // Returns whether a log joined.
  bool Adopt(const LogSet& found, std::vector<std::string>* notes);

  std::string log_dir_;
  bool multi_machine_ = false;
  std::vector<int> devices_;
  std::vector<std::string> files_;
  int threads_ = 0;
  LogSet logs_;
  std::vector<std::unique_ptr<FollowedLog>> followed_;  // logs_.files order
  std::set<std::string> gone_;
  std::vector<std::string> skipped_;  // found and not followed (gzip logs), said once
  std::string waiting_;  // the last discovery error said, not said again
  std::string missing_;  // the named files not there yet, as last said
  std::vector<std::string> warnings_;  // discovery's, as last said
  std::map<std::string, std::string> unreadable_;  // a log's read error, said once until it changes
  // Looked for once a second; at once again while the last look found new
  // logs (a job starting creates them over a moment: each one missed held
  // every step back for a second).
  static constexpr std::chrono::seconds kDiscoverEvery{1};
  std::chrono::steady_clock::time_point discovered_{};
  bool found_new_ = false;
};

}  // namespace jobviz
