#include "parse/event_streams.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <numeric>

#include <nlohmann/json.hpp>

#include "parse/event_json.h"

namespace jobviz {

using nlohmann::json;

struct EventStreams::Stream {
  explicit Stream(std::string path) : follower(path), path(std::move(path)) {}
  FileFollower follower;
  std::string path;
  std::string machine;
  bool header = false, ended = false, broken = false;
  std::uint64_t line = 0;
  std::map<std::int64_t, size_t> logs;  // worker -> index in logs_by_arrival_
};

EventStreams::EventStreams(std::vector<std::string> inputs) {
  for (std::string& input : inputs) streams_.push_back(std::make_unique<Stream>(std::move(input)));
}

EventStreams::~EventStreams() = default;

FollowedRecords& EventStreams::log(size_t i) { return *logs_by_arrival_[order_[i]].records; }
const FollowedRecords& EventStreams::log(size_t i) const { return *logs_by_arrival_[order_[i]].records; }

std::string EventStreams::Waited() const {
  for (const auto& stream : streams_)
    if (stream->logs.empty() && !stream->ended && !stream->broken && !stream->follower.gone()) return stream->path;
  return "";
}

std::vector<std::string> EventStreams::Directories() const {
  std::set<std::string> dirs;
  for (const auto& stream : streams_) {
    if (stream->path == "-") continue;
    const std::filesystem::path parent = std::filesystem::path(stream->path).parent_path();
    dirs.insert(parent.empty() ? "." : parent.string());
  }
  return {dirs.begin(), dirs.end()};
}

// Machines in natural order of their names, workers by index: what
// `--multi_machine` and a batch merge do.
void EventStreams::Order() {
  order_.resize(logs_by_arrival_.size());
  std::iota(order_.begin(), order_.end(), 0);
  std::stable_sort(order_.begin(), order_.end(), [&](size_t a, size_t b) {
    const Log& x = logs_by_arrival_[a];
    const Log& y = logs_by_arrival_[b];
    return x.machine != y.machine ? NaturalLess(x.machine, y.machine) : x.worker < y.worker;
  });
  LogSet logs;
  for (size_t i : order_) {
    const Log& log = logs_by_arrival_[i];
    if (logs.machine_names.empty() || logs.machine_names.back() != log.machine) logs.machine_names.push_back(log.machine);
    logs.files.push_back({static_cast<int>(logs.machine_names.size() - 1), log.worker, log.records->scan().file});
  }
  logs_ = std::move(logs);
}

void EventStreams::Line(Stream& stream, std::string_view text, Poll* poll) {
  const json j = json::parse(text);
  if (!stream.header) {
    if (!j.is_object() || j.value("format", "") != "jobviz-events" || !j.value("stream", false))
      throw std::runtime_error("not an events stream of `jobviz extract --follow`");
    stream.machine = j.at("machine").get<std::string>();
    for (const auto& other : streams_)
      if (other.get() != &stream && other->header && other->machine == stream.machine)
        throw std::runtime_error("machine " + stream.machine + " comes in two streams");
    stream.header = true;
    poll->notes.push_back(stream.path + ": machine " + stream.machine);
    return;
  }
  if (!j.contains("k") && j.contains("end")) {
    stream.ended = true;
    poll->notes.push_back(stream.path + ": extract stopped (its end line)");
    return;
  }
  if (stream.ended) throw std::runtime_error("a line after the end line");
  const std::int64_t worker = event_json::Int64At(j, "w");
  const std::string kind = j.at("k").get<std::string>();
  if (kind == "file") {
    if (worker < 0 || worker > INT32_MAX || stream.logs.count(worker))
      throw std::runtime_error("worker " + std::to_string(worker) + " is invalid or found twice");
    stream.logs[worker] = logs_by_arrival_.size();
    logs_by_arrival_.push_back({stream.machine, static_cast<int>(worker),
                                std::make_unique<FollowedRecords>(j.at("file").get<std::string>())});
    Order();
    ++generation_;
    return;
  }
  const auto it = stream.logs.find(worker);
  if (it == stream.logs.end()) throw std::runtime_error("a line of worker " + std::to_string(worker) + " before its file line");
  FollowedRecords& records = *logs_by_arrival_[it->second].records;
  if (kind == "restart") {
    records.Restart();
    ++poll->restarted;
    poll->notes.push_back(records.scan().file + ": truncated or replaced on " + stream.machine + "; a new run");
  } else if (kind == "totals") {
    event_json::LogTotals totals = event_json::TotalsFrom(j);
    records.SetTotals(totals.bytes, totals.lines, std::move(totals.skipped), std::move(totals.end));
  } else {
    WorkerLogScan part;
    part.lines = records.scan().lines;
    part.end = records.scan().end;
    try {
      part.records.push_back(event_json::RecordFrom(j));
    } catch (const event_json::BadRecord& bad) {
      part.skipped.Add({bad.reason, stream.path, stream.line, 0, std::string(text.substr(0, 240)), bad.what()});
    } catch (const json::exception& e) {  // a field of the wrong type: that record, not the stream
      part.skipped.Add({SkipReason::kMalformedJob, stream.path, stream.line, 0, std::string(text.substr(0, 240)),
                        std::string("a field is missing or of the wrong type (") + e.what() + ")"});
    }
    poll->records += part.records.size();
    poll->jobs += records.Append(std::move(part));
  }
}

FollowedSource::Poll EventStreams::PollAll(const LineParser&) {
  Poll poll;
  std::string lines;
  for (const auto& each : streams_) {
    Stream& stream = *each;
    if (stream.broken) continue;
    lines.clear();
    const FileFollower::Change change = stream.follower.Poll(&lines, FileFollower::kMaxRead);
    poll.more |= stream.follower.more();
    if (change == FileFollower::Change::kError) poll.notes.push_back(stream.path + ": cannot read: " + stream.follower.error());
    if (change == FileFollower::Change::kGone) poll.notes.push_back(stream.path + ": deleted; what it held stays in the run");
    if (change == FileFollower::Change::kRestarted)
      poll.notes.push_back(stream.path + ": truncated or replaced: it is read on from its start (restart extract with a new file instead)");
    std::string_view text = lines;
    try {
      while (!text.empty()) {
        const size_t end = text.find('\n');
        ++stream.line;
        if (end > 0) Line(stream, text.substr(0, end), &poll);
        text.remove_prefix(end + 1);
      }
    } catch (const std::exception& e) {
      // A stream that is not one, or is broken, is said and left; the others go on.
      poll.notes.push_back(stream.path + ":" + std::to_string(stream.line) + ": " + e.what() + "; this stream is no longer read");
      stream.broken = true;
    }
    if (stream.follower.cut_began())  // the next line: its newline, when it comes, ends it
      poll.notes.push_back(stream.path + ":" + std::to_string(stream.line + 1) + ": a line of over " +
                           std::to_string(FileFollower::kMaxHeldLine >> 20) +
                           " MiB with no newline: not a record; dropped up to its newline");
  }
  return poll;
}

}  // namespace jobviz
