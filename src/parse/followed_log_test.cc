#include "parse/followed_log.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "read/temp_dir_test_util.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_followed_log_test {

using namespace jobviz;
namespace fs = std::filesystem;

namespace {

std::string JobLine(int id, const char* type, int micro_batch, double start_ms) {
  char line[256];
  std::snprintf(line, sizeof line,
                "I1020 09:15:07.031446 22317 standalone_executor.cc:217] Profiler Info: Job (%d), type = %s, "
                "micro_batch_id = %d, job_start_time = %.6f, job_end_time = %.6f\n",
                id, type, micro_batch, start_ms, start_ms + 1.5);
  return line;
}

// A log with every kind of line the follower must keep or drop.
std::string SampleLog() {
  std::string log = "I1020 09:15:07.000000 22317 pipeline_scheduler.py:88] Schedule Profiler start at step 0 and end at step 9\n";
  double t = 1697793307000.0;
  for (int step = 0; step < 6; ++step) {
    log += "noise line " + std::to_string(step) + "\n";
    for (int mb = 0; mb < 2; ++mb, t += 2) log += JobLine(step * 10 + mb, "forward", mb, t);
    log += "Profiler Info: Job (1), type = forward, micro_batch_id = oops\n";  // malformed: skipped
    for (int mb = 0; mb < 2; ++mb, t += 2) log += JobLine(step * 10 + 5 + mb, "backward", mb, t);
    log += JobLine(step * 10 + 9, "optimizer", 0, t += 2);
  }
  return log;
}

void Append(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::app) << text; }

}  // namespace

TEST_CASE("A log read in pieces, cut anywhere, gives the records and counts of one read whole") {
  const LineParser parser;
  const std::string text = SampleLog();
  const WorkerLogScan whole = ScanWorkerLogText("w", text, parser);
  for (size_t piece : {1ul, 7ul, 100ul, 333ul}) {
    TempDir dir;
    const fs::path path = dir.path / "workerlog.0";
    FollowedLog log(path.string(), "w");
    for (size_t at = 0; at < text.size(); at += piece) {
      Append(path, text.substr(at, piece));
      while (log.Poll(parser).more) {
      }
    }
    const WorkerLogScan& followed = log.scan();
    REQUIRE(followed.records.size() == whole.records.size());
    for (size_t i = 0; i < whole.records.size(); ++i) {
      CHECK(followed.records[i].line == whole.records[i].line);
      CHECK(followed.records[i].kind == whole.records[i].kind);
      CHECK(followed.records[i].start == whole.records[i].start);
      CHECK(followed.records[i].end == whole.records[i].end);
    }
    CHECK(followed.lines == whole.lines);
    CHECK(followed.skipped.total() == whole.skipped.total());
    CHECK(followed.skipped.count(SkipReason::kTruncatedLastLine) == 0);
  }
}

TEST_CASE("A line being written is not a skipped line, and not the log's last line") {
  const LineParser parser;
  TempDir dir;
  const fs::path path = dir.path / "workerlog.0";
  const std::string line = JobLine(0, "forward", 0, 1697793307000.0);
  Append(path, line.substr(0, 60));
  FollowedLog log(path.string(), "w");
  log.Poll(parser);
  CHECK(log.scan().records.empty());
  CHECK(log.scan().skipped.total() == 0);
  CHECK_FALSE(log.scan().end.cut_mid_line);
  Append(path, line.substr(60));
  CHECK(log.Poll(parser).jobs == 1);
  CHECK(log.scan().records.size() == 1);
}

TEST_CASE("Records before a cut go, but not what says where the rank sits, where runs begin, or the step count") {
  std::vector<LogRecord> records;
  const auto add = [&](RecordKind kind, std::uint64_t line) {
    LogRecord r;
    r.kind = kind;
    r.line = line;
    records.push_back(r);
  };
  add(RecordKind::kProfilerHeader, 1);
  add(RecordKind::kHybridInfo, 2);
  add(RecordKind::kStartBanner, 3);
  for (std::uint64_t line = 4; line < 4 + FollowedRecords::kKeptClockSyncs + 10; ++line) add(RecordKind::kClockSync, line);
  add(RecordKind::kJob, 500);
  add(RecordKind::kStepPush, 501);
  add(RecordKind::kInFlight, 502);
  add(RecordKind::kJob, 600);
  add(RecordKind::kStepPush, 601);
  const std::vector<LogRecord> kept = RecordsFrom(records, 600, 7);
  size_t syncs = 0, headers = 0;
  bool window = false;
  for (const LogRecord& r : kept) {
    syncs += r.kind == RecordKind::kClockSync;
    headers += r.kind == RecordKind::kProfilerHeader || r.kind == RecordKind::kHybridInfo || r.kind == RecordKind::kStartBanner;
    if (r.kind == RecordKind::kProfilerWindow) {
      window = true;
      CHECK(r.step == 7);
      CHECK(r.line == 599);
      CHECK(r.cursor);  // it numbers this file's steps alone (model/step_finder.cc)
    }
    if (r.kind == RecordKind::kJob || r.kind == RecordKind::kStepPush) CHECK(r.line >= 600);
    CHECK(r.kind != RecordKind::kInFlight);
  }
  CHECK(syncs == FollowedRecords::kKeptClockSyncs);
  CHECK(headers == 3);
  CHECK(window);
  // In file order still.
  for (size_t i = 1; i < kept.size(); ++i) CHECK(kept[i - 1].line <= kept[i].line);
  // A log's own window line keeps its place and takes the step.
  records.insert(records.begin() + 3, LogRecord{});
  records[3].kind = RecordKind::kProfilerWindow;
  records[3].line = 3;
  records[3].step = 0;
  const std::vector<LogRecord> with_window = RecordsFrom(records, 600, 7);
  size_t windows = 0;
  for (const LogRecord& r : with_window)
    if (r.kind == RecordKind::kProfilerWindow) {
      ++windows;
      CHECK(r.step == 7);
      CHECK(r.cursor);
    }
  CHECK(windows == 1);
  // Given the indices of the kinds kept across cuts, it looks at those only, to the same result.
  std::vector<size_t> kinds;
  for (size_t i = 0; i < records.size(); ++i)
    if (KeptAcrossCuts(records[i].kind)) kinds.push_back(i);
  const std::vector<LogRecord> indexed = RecordsFrom(records, 600, 7, &kinds);
  REQUIRE(indexed.size() == with_window.size());
  for (size_t i = 0; i < indexed.size(); ++i) {
    CHECK(indexed[i].line == with_window[i].line);
    CHECK(indexed[i].kind == with_window[i].kind);
    CHECK(indexed[i].step == with_window[i].step);
  }
}

TEST_CASE("The cursor's copy and a drop keep the same records; a restarted job's log starts over") {
  const LineParser parser;
  TempDir dir;
  const fs::path path = dir.path / "workerlog.0";
  Append(path, SampleLog());
  FollowedLog log(path.string(), "w");
  log.Poll(parser);
  const size_t all = log.scan().records.size();
  log.SetCursor(40, 3);
  const WorkerLogScan from_cursor = log.ScanFromCursor();
  CHECK(from_cursor.records.size() < all);
  CHECK(log.scan().records.size() == all);  // the copy leaves the log as it was
  CHECK(log.DropBefore(40, 3) > 0);
  REQUIRE(log.scan().records.size() == from_cursor.records.size());
  // The job restarted: its log rewritten, its profiler start line again.
  std::ofstream(path, std::ios::trunc) << "I1020 10:15:07.000000 31000 pipeline_scheduler.py:88] Schedule Profiler start at step 0 and end at step 9\n"
                                       << JobLine(0, "forward", 0, 1697793999000.0);
  CHECK(log.Poll(parser).rotated);
  CHECK(log.Poll(parser).restarted);  // its first job line: a new run by the restart rules
  CHECK(log.restarts() == 1);
  CHECK(log.scan().records.size() == 2);
  CHECK(log.scan().records.back().line == 2);  // numbered from its first line again
  CHECK(log.ScanFromCursor().records.size() == 2);
}

TEST_CASE("A rotated log (copytruncate) goes on: its records kept, its lines numbered on") {
  const LineParser parser;
  TempDir dir;
  const fs::path path = dir.path / "workerlog.0";
  Append(path, SampleLog());
  FollowedLog log(path.string(), "w");
  log.Poll(parser);
  const size_t all = log.scan().records.size();
  const std::uint64_t lines = log.scan().lines;
  std::ofstream(path, std::ios::trunc) << "noise written on\n";
  CHECK(log.Poll(parser).rotated);
  CHECK(log.Poll(parser).records == 0);  // no job line yet: it waits to tell a rotation from a restart
  Append(path, JobLine(60, "forward", 0, 1697793307100.0));
  const FollowedLog::Update update = log.Poll(parser);
  CHECK(update.records == 1);
  CHECK_FALSE(update.restarted);
  CHECK(log.scan().records.size() == all + 1);
  CHECK(log.scan().records.back().line == lines + 2);
  CHECK(log.restarts() == 0);
}

}  // namespace unit_followed_log_test
