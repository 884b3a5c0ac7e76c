// The open events streams of `jobviz extract --follow`, one per machine, as
// `jobviz merge --follow` reads them (docs/extract-merge.md, "A stream"):
// files on shared storage growing, FIFOs, or "-" (standard input), each read
// as it comes (read/file_follower.h) and turned into the records of each of
// its machine's logs, as the logs themselves would give.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "parse/followed_source.h"
#include "read/file_follower.h"

namespace jobviz {

class EventStreams : public FollowedSource {
 public:
  explicit EventStreams(std::vector<std::string> inputs);
  ~EventStreams() override;

  Poll PollAll(const LineParser& parser) override;
  const LogSet& logs() const override { return logs_; }
  size_t size() const override { return logs_.files.size(); }
  FollowedRecords& log(size_t i) override;
  const FollowedRecords& log(size_t i) const override;
  const std::set<std::string>& gone() const override { return gone_; }
  std::string Waited() const override;
  std::vector<std::string> Directories() const override;

 private:
  struct Stream;
  struct Log {
    std::string machine;
    int worker = 0;
    std::unique_ptr<FollowedRecords> records;
  };
  void Line(Stream& stream, std::string_view line, Poll* poll);
  void Order();

  std::vector<std::unique_ptr<Stream>> streams_;
  std::vector<Log> logs_by_arrival_;
  std::vector<size_t> order_;  // logs_.files[i] is logs_by_arrival_[order_[i]]
  LogSet logs_;
  std::set<std::string> gone_;
};

}  // namespace jobviz
