#include "model/run_splitter.h"

#include <catch2/catch.hpp>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_run_splitter_test {

using namespace jobviz;

namespace {

LogRecord Rec(RecordKind kind, std::uint64_t line, std::int64_t value = 0) {
  LogRecord r;
  r.kind = kind;
  r.line = line;
  r.step = value;
  r.round = value;
  return r;
}

}  // namespace

TEST_CASE("One run when nothing restarts") {
  const std::vector<LogRecord> records = {
      Rec(RecordKind::kProfilerWindow, 1, 5), Rec(RecordKind::kProfilerWindow, 2, 5),
      Rec(RecordKind::kStepPush, 3, 5),       Rec(RecordKind::kJob, 4),
      Rec(RecordKind::kStepPop, 5),           Rec(RecordKind::kStepPush, 6, 6),
      Rec(RecordKind::kJob, 7)};
  const auto runs = SplitRuns(records);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].begin == 0);
  CHECK(runs[0].end == records.size());
}

TEST_CASE("A profiler start line after jobs starts a new run") {
  const std::vector<LogRecord> records = {Rec(RecordKind::kProfilerWindow, 1, 5), Rec(RecordKind::kJob, 2),
                                          Rec(RecordKind::kJob, 3), Rec(RecordKind::kProfilerWindow, 10, 5),
                                          Rec(RecordKind::kJob, 11)};
  const auto runs = SplitRuns(records);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].end == 3);
  CHECK(runs[1].begin == 3);
  CHECK(runs[1].first_line == 10);
  CHECK(runs[1].started_by == "profiler start line after jobs");
}

TEST_CASE("A step number pushed again starts a new run") {
  const std::vector<LogRecord> records = {Rec(RecordKind::kStepPush, 1, 5), Rec(RecordKind::kJob, 2),
                                          Rec(RecordKind::kStepPush, 3, 6), Rec(RecordKind::kJob, 4),
                                          Rec(RecordKind::kStepPush, 5, 5), Rec(RecordKind::kJob, 6)};
  const auto runs = SplitRuns(records);
  REQUIRE(runs.size() == 2);
  CHECK(runs[1].begin == 4);
  CHECK(runs[1].started_by == "step 5 pushed again");
}

TEST_CASE("A clock sync round taken again starts a new run") {
  const std::vector<LogRecord> records = {Rec(RecordKind::kClockSync, 1, 0), Rec(RecordKind::kClockSync, 2, 1),
                                          Rec(RecordKind::kJob, 3), Rec(RecordKind::kClockSync, 4, 0)};
  const auto runs = SplitRuns(records);
  REQUIRE(runs.size() == 2);
  CHECK(runs[1].begin == 3);
}

TEST_CASE("Clock sync rounds before the profiler start line belong to its run") {
  const std::vector<LogRecord> records = {Rec(RecordKind::kClockSync, 1, 0), Rec(RecordKind::kClockSync, 2, 1),
                                          Rec(RecordKind::kProfilerWindow, 3, 5), Rec(RecordKind::kJob, 4),
                                          Rec(RecordKind::kClockSync, 5, 2)};
  CHECK(SplitRuns(records).size() == 1);
}

TEST_CASE("No records, no runs") { CHECK(SplitRuns({}).empty()); }

namespace {

LogRecord JobAt(std::uint64_t line, Nanos start_s, std::uint32_t thread) {
  LogRecord r = Rec(RecordKind::kJob, line);
  r.start = start_s * 1'000'000'000;
  r.end = r.start + 1'000'000'000;
  r.thread = thread;
  return r;
}

}  // namespace

TEST_CASE("The start-up banner printed again after jobs starts a new run when the jobs after it say so") {
  const Nanos minutes = kRestartGap / 1'000'000'000 + 60;
  SECTION("another glog thread: a new process") {
    const auto runs = SplitRuns({Rec(RecordKind::kStartBanner, 1), JobAt(2, 0, 7), JobAt(3, 2, 7),
                                 Rec(RecordKind::kStartBanner, 9), JobAt(10, 4, 8)});
    REQUIRE(runs.size() == 2);
    CHECK(runs[1].first_line == 9);
    CHECK(runs[1].started_by.find("start-up banner") == 0);
    CHECK(runs[1].started_by.find("(7 -> 8)") != std::string::npos);
    CHECK(runs[0].jobs == 2);
    CHECK(runs[1].jobs == 1);
  }
  SECTION("the same thread going on (a child process printed it): one run, and a note") {
    const auto runs = SplitRuns({Rec(RecordKind::kStartBanner, 1), JobAt(2, 0, 7), JobAt(3, 2, 7),
                                 Rec(RecordKind::kStartBanner, 9), JobAt(10, 4, 7), JobAt(11, 6, 7)});
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].jobs == 4);
    REQUIRE(runs[0].notes.size() == 1);
    CHECK(runs[0].notes[0].find("line 9: start-up banner printed again") == 0);
  }
  SECTION("without thread ids: a new run only when the next job comes minutes later") {
    CHECK(SplitRuns({JobAt(2, 0, 0), Rec(RecordKind::kStartBanner, 9), JobAt(10, 4, 0)}).size() == 1);
    const auto runs = SplitRuns({JobAt(2, 0, 0), Rec(RecordKind::kStartBanner, 9), JobAt(10, 4 + minutes, 0)});
    REQUIRE(runs.size() == 2);
    CHECK(runs[1].first_line == 9);
  }
  SECTION("a profiler start line after the banner: the new run starts at the banner") {
    const auto runs = SplitRuns({JobAt(2, 0, 7), Rec(RecordKind::kStartBanner, 9), Rec(RecordKind::kProfilerWindow, 10),
                                 JobAt(11, 4, 7)});
    REQUIRE(runs.size() == 2);
    CHECK(runs[1].first_line == 9);
  }
  SECTION("before any job it is the run's own start") {
    CHECK(SplitRuns({Rec(RecordKind::kStartBanner, 1), JobAt(2, 0, 7)}).size() == 1);
  }
}

TEST_CASE("A jump of minutes with another glog thread starts a new run; either alone does not") {
  const Nanos minutes = kRestartGap / 1'000'000'000 + 60;
  SECTION("both") {
    const auto runs = SplitRuns({JobAt(1, 0, 7), JobAt(2, 2, 7), JobAt(8, 3 + minutes, 9), JobAt(9, 5 + minutes, 9)});
    REQUIRE(runs.size() == 2);
    CHECK(runs[1].first_line == 8);
    CHECK(runs[1].started_by == "job times jump 6.0 min forward and the glog thread id changes (7 -> 9)");
  }
  SECTION("a long pause on the same thread (a checkpoint) is one run") {
    CHECK(SplitRuns({JobAt(1, 0, 7), JobAt(2, 2 + minutes, 7)}).size() == 1);
  }
  SECTION("another thread without a pause is one run") {
    CHECK(SplitRuns({JobAt(1, 0, 7), JobAt(2, 2, 9), JobAt(3, 4, 7)}).size() == 1);
  }
  SECTION("lines without a glog thread never count as a change") {
    CHECK(SplitRuns({JobAt(1, 0, 0), JobAt(2, 2 + minutes, 9)}).size() == 1);
  }
  SECTION("the gap is from the latest end, not the last line: jobs print out of time order") {
    CHECK(SplitRuns({JobAt(1, 100, 7), JobAt(2, 0, 7), JobAt(3, 102, 9)}).size() == 1);
  }
}

TEST_CASE("Job times going back by minutes in file order are the clock set back, noted on the run, not a new run") {
  const Nanos minutes = kRestartGap / 1'000'000'000 + 60;
  const auto runs = SplitRuns({JobAt(1, minutes + 10, 7), JobAt(2, minutes + 12, 7), JobAt(3, 0, 7), JobAt(4, 2, 9)});
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].clock_back_line == 3);
  CHECK(runs[0].clock_back == (minutes + 13 - 1) * 1'000'000'000);
  CHECK(SplitRuns({JobAt(1, 10, 7), JobAt(2, 5, 7)})[0].clock_back_line == 0);  // seconds out of order: jobs print so
}

namespace {

LogRecord FromThread(RecordKind kind, std::uint64_t line, std::int64_t value, std::uint32_t thread, std::int64_t rank = 0) {
  LogRecord r = Rec(kind, line, value);
  r.thread = thread;
  r.rank = rank;
  return r;
}

}  // namespace

TEST_CASE("Two processes writing one file at once are found by their glog threads, and split nothing") {
  // Rank 0 (thread 11) and rank 1 (thread 22) both given the same log path.
  const std::vector<LogRecord> records = {
      FromThread(RecordKind::kClockSync, 1, 0, 11, 0), FromThread(RecordKind::kClockSync, 2, 0, 22, 1),
      FromThread(RecordKind::kStepPush, 3, 0, 11),     FromThread(RecordKind::kJob, 4, 0, 11),
      FromThread(RecordKind::kStepPush, 5, 0, 22),     FromThread(RecordKind::kJob, 6, 0, 22),
      FromThread(RecordKind::kJob, 7, 0, 11),          FromThread(RecordKind::kStepPush, 8, 1, 11),
      FromThread(RecordKind::kJob, 9, 0, 22)};
  const SharedWriters shared = FindSharedWriters(records);
  CHECK(shared.line == 2);  // thread 22 takes round 0 again, and thread 11 writes after it
  CHECK(shared.threads == std::vector<std::uint32_t>{11, 22});
  CHECK(shared.ranks == std::vector<std::int64_t>{0, 1});
  CHECK(SplitRuns(records).size() == 3);  // what a restart rule alone would do
  const auto runs = SplitRuns(records, true);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].jobs == 4);
}

TEST_CASE("A restart counts again too, but the old process never writes after it: not shared") {
  const std::vector<LogRecord> records = {
      FromThread(RecordKind::kClockSync, 1, 0, 11), FromThread(RecordKind::kStepPush, 2, 0, 11),
      FromThread(RecordKind::kJob, 3, 0, 11),       FromThread(RecordKind::kStepPush, 4, 1, 11),
      FromThread(RecordKind::kJob, 5, 0, 11),       FromThread(RecordKind::kClockSync, 6, 0, 22),
      FromThread(RecordKind::kStepPush, 7, 0, 22),  FromThread(RecordKind::kJob, 8, 0, 22)};
  const SharedWriters shared = FindSharedWriters(records);
  CHECK(shared.line == 0);
  CHECK(shared.threads.empty());
  CHECK(SplitRuns(records, shared.line != 0).size() == 2);
}

TEST_CASE("Without thread ids, a rank that writes again after another rank shares the file") {
  std::vector<LogRecord> records = {Rec(RecordKind::kClockSync, 1, 0), Rec(RecordKind::kClockSync, 2, 0),
                                    Rec(RecordKind::kJob, 3), Rec(RecordKind::kClockSync, 4, 1)};
  records[1].rank = 1;
  CHECK(FindSharedWriters(records).line == 4);
  CHECK(FindSharedWriters(records).ranks == std::vector<std::int64_t>{0, 1});
  // Restarted as another rank: rank 0's lines, then rank 1's, and never back.
  records[3].rank = 1;
  CHECK(FindSharedWriters(records).line == 0);
}

TEST_CASE("A rank whose sync point comes before times already written ran at once with the other") {
  // Each process buffered its lines: rank 0's whole block, then rank 1's.
  std::vector<LogRecord> records = {Rec(RecordKind::kClockSync, 1, 0), Rec(RecordKind::kJob, 2),
                                    Rec(RecordKind::kClockSync, 3, 0), Rec(RecordKind::kJob, 4)};
  records[0].start = 1000;
  records[1].start = 1100, records[1].end = 1900;
  records[2].rank = 1, records[2].start = 1010;
  records[3].start = 1150, records[3].end = 1950;
  const SharedWriters shared = FindSharedWriters(records);
  CHECK(shared.line == 3);
  CHECK(shared.threads.empty());
  CHECK(shared.ranks == std::vector<std::int64_t>{0, 1});
  // Restarted as rank 1 after rank 0 ended: its sync point comes later.
  records[2].start = 2000;
  CHECK(FindSharedWriters(records).line == 0);
}

namespace {

LogRecord Header(std::uint64_t line, std::int64_t rank, std::uint32_t thread) {
  return FromThread(RecordKind::kProfilerHeader, line, 0, thread, rank);
}

}  // namespace

TEST_CASE("Two libjobviz processes in one file without sync or step lines: found by their start lines and job threads") {
  // The case: two ranks given one log path by the Python package,
  // no clock sync, no steps. Each writes its start line from the launching
  // thread (1, 2) and its job lines from its writer thread (11, 22), in
  // blocks as its buffer flushes.
  SECTION("both started before either wrote a job: the blocks take turns") {
    std::vector<LogRecord> records = {Header(1, 0, 1), Header(2, 1, 2)};
    std::uint64_t line = 3;
    for (int block = 0; block < 4; ++block)
      for (const std::uint32_t thread : {11u, 22u})
        for (int j = 0; j < 3; ++j) records.push_back(FromThread(RecordKind::kJob, line++, 0, thread));
    const SharedWriters shared = FindSharedWriters(records);
    CHECK(shared.line == 15);  // the third return: 11 at line 9, 22 at 12, 11 at 15
    CHECK(shared.ranks == std::vector<std::int64_t>{0, 1});
    CHECK(shared.threads == std::vector<std::uint32_t>{11, 22});
  }
  SECTION("libjobviz found the log locked by the other: its start line says so, whatever the order of the lines") {
    // Each process wrote everything at its Shutdown, in one block each.
    std::vector<LogRecord> records = {Header(1, 0, 1), FromThread(RecordKind::kJob, 2, 0, 1), Header(3, 1, 2),
                                      FromThread(RecordKind::kJob, 4, 0, 2)};
    CHECK(FindSharedWriters(records).line == 0);  // by threads alone, a restart
    records[2].log_shared = true;
    CHECK(FindSharedWriters(records).line == 3);
    CHECK(FindSharedWriters(records).ranks == std::vector<std::int64_t>{0, 1});
  }
  SECTION("the second started after the first wrote jobs: the first writes on after its start line") {
    const std::vector<LogRecord> records = {Header(1, 0, 1), FromThread(RecordKind::kJob, 2, 0, 11),
                                            Header(3, 1, 2), FromThread(RecordKind::kJob, 4, 0, 22),
                                            FromThread(RecordKind::kJob, 5, 0, 11)};
    const SharedWriters shared = FindSharedWriters(records);
    CHECK(shared.line == 5);
    CHECK(shared.ranks == std::vector<std::int64_t>{0, 1});
  }
}

TEST_CASE("libjobviz start lines that do not make two writers") {
  SECTION("a restart: the old process's threads never write after the new start line") {
    const std::vector<LogRecord> records = {Header(1, 0, 1), FromThread(RecordKind::kJob, 2, 0, 11),
                                            FromThread(RecordKind::kJob, 3, 0, 11), FromThread(RecordKind::kJob, 4, 0, 1),
                                            Header(5, 0, 3), FromThread(RecordKind::kJob, 6, 0, 33),
                                            FromThread(RecordKind::kJob, 7, 0, 33)};
    CHECK(FindSharedWriters(records).line == 0);
  }
  SECTION("one process whose Shutdown writes its last lines from another thread, after a crashed start") {
    // Rank 1's process died before any job; rank 0's writes from its writer
    // thread (11) and, at Shutdown, from the launching thread (1), while the
    // writer thread finishes a pass: a turn or two, not blocks all along.
    std::vector<LogRecord> records = {Header(1, 1, 2), Header(2, 0, 1)};
    std::uint64_t line = 3;
    for (int j = 0; j < 20; ++j) records.push_back(FromThread(RecordKind::kJob, line++, 0, 11));
    for (const std::uint32_t thread : {1u, 11u, 1u}) records.push_back(FromThread(RecordKind::kJob, line++, 0, thread));
    CHECK(FindSharedWriters(records).line == 0);
  }
  SECTION("Paddle's own logs (no libjobviz start line): threads taking turns prove nothing") {
    std::vector<LogRecord> records;
    std::uint64_t line = 1;
    for (int block = 0; block < 6; ++block)
      for (const std::uint32_t thread : {11u, 22u}) records.push_back(FromThread(RecordKind::kJob, line++, 0, thread));
    CHECK(FindSharedWriters(records).line == 0);
  }
}

TEST_CASE("Two ranks' start lines one after the other in one log: each rank's part is a run of its own") {
  const auto header = [](std::uint64_t line, std::int64_t rank) {
    LogRecord r = Rec(RecordKind::kProfilerHeader, line);
    r.rank = rank;
    return r;
  };
  const std::vector<LogRecord> records = {header(1, 0), Rec(RecordKind::kJob, 2), Rec(RecordKind::kJob, 3),
                                          header(9, 1), Rec(RecordKind::kJob, 10), Rec(RecordKind::kJob, 11)};
  const auto runs = SplitRuns(records);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].rank_line == 0);
  CHECK(runs[1].first_line == 9);
  CHECK(runs[1].jobs == 2);
  CHECK(runs[1].rank_line == 9);
  CHECK(runs[1].rank == 1);
  CHECK(runs[1].other_rank_line == 1);
  CHECK(runs[1].other_rank == 0);
  CHECK(runs[1].started_by.find("two ranks wrote this log one after the other") != std::string::npos);
  // The same rank starting again (a restart) is not two ranks; several at once is the shared-writer rule's.
  const std::vector<LogRecord> restarted = {header(1, 0), Rec(RecordKind::kJob, 2), header(9, 0), Rec(RecordKind::kJob, 10)};
  for (const RunRange& run : SplitRuns(restarted)) CHECK(run.rank_line == 0);
  for (const RunRange& run : SplitRuns(records, /*shared_writers=*/true)) CHECK(run.rank_line == 0);
  CHECK(SplitRuns(records, true).size() == 1);
}

}  // namespace unit_run_splitter_test
