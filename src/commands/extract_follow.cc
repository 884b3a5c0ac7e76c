// jobviz extract --follow: one machine's records as its logs grow, written
// as an open events stream (docs/extract-merge.md, "A stream"): the header,
// then for each log a file line, its records and its figures as they come,
// a restart line when it is truncated or replaced, and the end line only
// when extract is stopped. `jobviz merge --follow` reads such streams.
#include <cstdio>
#include <map>

#include "cli/exit_status.h"
#include "cli/report.h"
#include "commands/commands.h"
#include "parse/event_json.h"
#include "parse/tree_follower.h"
#include "read/change_waker.h"
#include "write/json_text.h"

namespace jobviz {

namespace {

using nlohmann::json;

// What was written of one log: to write only what changed.
struct Written {
  bool announced = false;
  std::uint64_t restarts = 0, lines = 0, bytes = 0, skipped = 0;
};

class StreamOut {
 public:
  explicit StreamOut(FILE* out) : out_(out) {}
  void Line(const json& j) {
    const std::string text = j.dump() + "\n";
    ok_ = ok_ && std::fwrite(text.data(), 1, text.size(), out_) == text.size();
  }
  bool Flush() { return ok_ && std::fflush(out_) == 0; }

 private:
  FILE* out_;
  bool ok_ = true;
};

// Everything new of every log, in the order a reader needs it.
std::uint64_t WriteNew(TreeFollower& tree, std::map<std::string, Written>& written, StreamOut& out) {
  std::uint64_t records = 0;
  for (size_t i = 0; i < tree.size(); ++i) {
    FollowedLog& log = tree.log(i);
    const int worker = tree.logs().files[i].worker;
    Written& w = written[log.path()];
    if (!w.announced) {
      out.Line({{"w", worker}, {"k", "file"}, {"file", ValidUtf8(log.scan().file)}});
      w.announced = true;
    }
    if (log.restarts() != w.restarts) {
      out.Line({{"w", worker}, {"k", "restart"}});
      w.restarts = log.restarts();
    }
    for (const LogRecord& r : log.TakeRecords()) {
      out.Line(event_json::RecordJson(worker, r));
      ++records;
    }
    const WorkerLogScan& scan = log.scan();
    if (scan.lines != w.lines || scan.bytes != w.bytes || scan.skipped.total() != w.skipped) {
      out.Line(event_json::TotalsJson(worker, scan));
      w.lines = scan.lines;
      w.bytes = scan.bytes;
      w.skipped = scan.skipped.total();
    }
  }
  return records;
}

}  // namespace

int RunExtractFollow(const ExtractPlan& plan) {
  FILE* file = plan.output == "-" ? stdout : std::fopen(plan.output.c_str(), "w");
  if (!file) {
    PrintError("cannot write " + plan.output, "name a file in a directory that exists, or - for stdout");
    return kExitBadInput;
  }
  ChangeWaker::HandleStopSignals();
  TreeFollower tree(plan.inputs.log_dir, false, plan.inputs.devices, {}, plan.inputs.threads);
  ChangeWaker waker;
  const LineParser parser;
  StreamOut out(file);
  out.Line({{"format", "jobviz-events"}, {"version", 2}, {"machine", ValidUtf8(plan.machine)},
            {"files", json::array()}, {"stream", true}});
  std::map<std::string, Written> written;
  std::uint64_t records = 0;
  bool ok = out.Flush();
  while (ok && !ChangeWaker::StopAsked()) {
    const TreeFollower::Poll poll = tree.PollAll(parser);
    if (plan.verbosity >= kNormal)
      for (const std::string& note : poll.notes) PrintReport("jobviz extract: " + note + "\n");
    records += WriteNew(tree, written, out);
    ok = out.Flush();
    for (const std::string& dir : tree.Directories()) waker.Watch(dir);
    if (!poll.more) waker.Wait(plan.poll_seconds);
  }
  if (ok) {
    records += WriteNew(tree, written, out);
    out.Line({{"end", "jobviz-events"}, {"records", records}});
    ok = out.Flush();
  }
  if (file != stdout) ok = std::fclose(file) == 0 && ok;
  if (!ok) {
    PrintError("cannot write " + (plan.output == "-" ? std::string("standard output") : plan.output) + " (its reader went away?)");
    return kExitBadInput;
  }
  if (plan.verbosity >= kNormal)
    PrintReport("jobviz extract: " + plan.machine + ": " + std::to_string(tree.size()) + " files, " +
                std::to_string(records) + " records streamed\n");
  return kExitOk;
}

}  // namespace jobviz
