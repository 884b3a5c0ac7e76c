#include "parse/log_tail.h"

#include <catch2/catch.hpp>

#include "parse/line_parser.h"
#include "parse/workerlog_scan.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_log_tail_test {

using namespace jobviz;

namespace {
constexpr Nanos kMs = 1'000'000;
// 2023-10-20 09:15:07.213 UTC
constexpr Nanos kJobEnd = 1'697'793'307'213 * kMs;
}  // namespace

TEST_CASE("A glog prefix's local time, checked field by field") {
  const auto stamp = ParseGlogStamp("I1020 09:15:07.265326 22317 f.cc:1] x");
  REQUIRE(stamp);
  CHECK(stamp->month == 10);
  CHECK(stamp->day == 20);
  CHECK(stamp->time_of_day == ((9 * 60 + 15) * 60 + 7) * 1'000'000'000LL + 265'326'000);
  CHECK_FALSE(ParseGlogStamp("X1020 09:15:07.265326 1 f.cc:1] x"));
  CHECK_FALSE(ParseGlogStamp("I1320 09:15:07.265326 1 f.cc:1] x"));   // month 13
  CHECK_FALSE(ParseGlogStamp("I1020 24:15:07.265326 1 f.cc:1] x"));   // hour 24
  CHECK_FALSE(ParseGlogStamp("I1020 09:15:07.26532x 1 f.cc:1] x"));
  CHECK_FALSE(ParseGlogStamp("[2023-10-20 09:15:07,265] [ INFO] - x"));
}

TEST_CASE("The writer's zone comes from a job line's own stamp, to the quarter hour") {
  // Printed 40 ms after the job ended, in UTC+8 and in UTC-5:30.
  const GlogStamp utc8{10, 20, ((17 * 60 + 15) * 60 + 7) * 1'000'000'000LL + 253'000'000};
  CHECK(GlogZoneOffset(utc8, kJobEnd) == 8 * 3600 * 1'000'000'000LL);
  const GlogStamp minus530{10, 20, ((3 * 60 + 45) * 60 + 7) * 1'000'000'000LL + 253'000'000};
  CHECK(GlogZoneOffset(minus530, kJobEnd) == -(5 * 3600 + 1800) * 1'000'000'000LL);
  // A stamp a day away fits no zone.
  const GlogStamp far{10, 22, 0};
  CHECK_FALSE(GlogZoneOffset(far, kJobEnd));
  // Back on the job clock, across a year's end.
  const Nanos new_year = 1'704'067'200'000 * kMs;  // 2024-01-01 00:00:00 UTC
  CHECK(GlogStampTime({12, 31, 23 * 3600 * 1'000'000'000LL}, 0, new_year) == new_year - 3600 * 1'000'000'000LL);
  CHECK(GlogStampTime({1, 1, 9 * 3600 * 1'000'000'000LL}, 8 * 3600 * 1'000'000'000LL, new_year) ==
        new_year + 3600 * 1'000'000'000LL);
}

TEST_CASE("A scanned log says how it ends: last line, cut mid-line, last stamped line on the job clock") {
  const LineParser parser;
  const std::string job =
      "I1020 17:15:07.253000 22317 e.cc:1] Profiler Info: Job (0), type = forward, micro_batch_id = 0, "
      "job_start_time = 1697793307200.000000, job_end_time = 1697793307213.000000\n";
  SECTION("stamped lines after the last job: the log went on until 5 s later") {
    const auto scan = ScanWorkerLogText("w", job + "I1020 17:15:12.213000 9 x.cc:2] heartbeat\nTraceback (most recent call last):\n",
                                        parser, 64);
    CHECK(scan.lines == 3);
    CHECK(scan.end.lines == 3);
    CHECK(scan.end.last_line == "Traceback (most recent call last):");
    CHECK_FALSE(scan.end.cut_mid_line);
    CHECK(scan.end.stamped_line == 2);
    CHECK(scan.end.stamped == kJobEnd + 5000 * kMs);
  }
  SECTION("a file cut inside a line") {
    const auto scan = ScanWorkerLogText("w", job + "I1020 17:15:08.000000 9 x.cc:2] Profiler Info: Job (1), ty", parser);
    CHECK(scan.end.cut_mid_line);
    CHECK(scan.end.last_line == "I1020 17:15:08.000000 9 x.cc:2] Profiler Info: Job (1), ty");
    CHECK(scan.end.stamped == kJobEnd + 787 * kMs);
  }
  SECTION("no job line with a prefix: no zone, no stamped time") {
    const auto scan = ScanWorkerLogText("w", "I1020 17:15:08.000000 9 x.cc:2] hello\n", parser);
    CHECK(scan.end.stamped == 0);
    CHECK(scan.end.last_line == "I1020 17:15:08.000000 9 x.cc:2] hello");
  }
}

TEST_CASE("A job time past what 64-bit nanoseconds hold as a date: its stamps are not read, never wrapped") {
  // Seen from the hostile set: 106,943 days * 86,400 s overflowed (UBSan).
  const auto stamp = ParseGlogStamp("I1020 09:15:07.265326 22317 f.cc:1] x");
  REQUIRE(stamp);
  constexpr Nanos kFar = INT64_MAX - 1000;
  CHECK_FALSE(GlogZoneOffset(*stamp, kFar));
  CHECK(GlogStampTime(*stamp, 0, kFar) == 0);
  CHECK(GlogStampTime(*stamp, 8LL * 3600 * 1'000'000'000, INT64_MIN + 1000) == 0);
  // An ordinary one still reads.
  CHECK(GlogStampTime(*stamp, 0, kJobEnd) > 0);
}

TEST_CASE("A log's end lines count only after its last job line") {
  const LineParser parser;
  const std::string job =
      "I1020 17:15:07.253000 22317 e.cc:1] Profiler Info: Job (0), type = forward, micro_batch_id = 0, "
      "job_start_time = 1697793307200.000000, job_end_time = 1697793307213.000000\n";
  const std::string stats =
      "I1020 17:15:09.000000 22317 jobviz_profiler.cc:1] Profiler Stats: rank = 0, jobs recorded = 2, records lost = 0, "
      "calls refused = 0, jobs never ended = 0\n";
  const std::string completed = "[2023-10-20 17:15:10,000] [    INFO] - \nTraining completed. \n";
  SECTION("libjobviz's closing line, then other lines") {
    const auto scan = ScanWorkerLogText("w", job + job + stats + "bye\n", parser, 64);
    CHECK(scan.end.closed_line == 3);
    CHECK(scan.end.training_completed_line == 0);
  }
  SECTION("a trainer's line, the file ending without a newline") {
    const auto scan = ScanWorkerLogText("w", job + completed + "saving", parser);
    CHECK(scan.end.training_completed_line == 3);
    CHECK(scan.end.closed_line == 0);
  }
  SECTION("the last of two closing lines, past a line that starts as one; a marker that begins the tail") {
    const auto scan = ScanWorkerLogText("w", job + stats + "Profiler Stat\n" + stats + "Profiler Info\n", parser);
    CHECK(scan.end.closed_line == 4);
    CHECK(ScanWorkerLogText("w", "Training completed", parser).end.training_completed_line == 1);
  }
  SECTION("a job line after them: the run went on (a restart, another round)") {
    const auto scan = ScanWorkerLogText("w", job + stats + completed + job, parser);
    CHECK(scan.end.closed_line == 0);
    CHECK(scan.end.training_completed_line == 0);
  }
}

}  // namespace unit_log_tail_test
