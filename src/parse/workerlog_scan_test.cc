#include "parse/workerlog_scan.h"

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_workerlog_scan_test {

using namespace jobviz;

namespace {

const LineParser& Parser() {
  static const LineParser parser;
  return parser;
}

std::string JobLine(int id, const std::string& type, int mb, const std::string& start,
                    const std::string& end) {
  return "I1020 09:15:07.265326 22317 standalone_executor.cc:217] Profiler Info: Job (" +
         std::to_string(id) + "), type = " + type + ", micro_batch_id = " + std::to_string(mb) +
         ", job_start_time = " + start + ", job_end_time = " + end;
}

const std::string kNoise = "I1020 09:15:07.265326 22317 interpretercore.cc:1021] tensor shape=[8, 1024]";

}  // namespace

TEST_CASE("Records keep their file order and 1-based line numbers, at any block size") {
  std::string log;
  log += kNoise + "\n";
  log += "Schedule Profiler start at step 5 and end at step 10\n";
  log += "NVTX range push: 5, time: 1697793307200.000000\n";
  log += kNoise + "\n";
  log += JobLine(0, "forward", 0, "1697793307213.760986", "1697793307254.006104") + "\n";
  log += "NVTX range pop, time: 1697793307290.113281\n";
  log += "Clock Sync: rank = 1, round = 0, time = 1697793307300.000001\n";
  for (size_t block : {8u, 64u, 4096u}) {
    const WorkerLogScan scan = ScanWorkerLogText("w.log", log, Parser(), block);
    INFO("block " << block);
    CHECK(scan.lines == 7);
    CHECK(scan.bytes == log.size());
    REQUIRE(scan.records.size() == 5);
    CHECK(scan.records[0].kind == RecordKind::kProfilerWindow);
    CHECK(scan.records[0].line == 2);
    CHECK(scan.records[1].kind == RecordKind::kStepPush);
    CHECK(scan.records[1].line == 3);
    CHECK(scan.records[2].kind == RecordKind::kJob);
    CHECK(scan.records[2].line == 5);
    CHECK(scan.records[2].start == 1697793307213760986);
    CHECK(scan.records[3].kind == RecordKind::kStepPop);
    CHECK(scan.records[4].kind == RecordKind::kClockSync);
    CHECK(scan.records[4].line == 7);
    CHECK(scan.skipped.total() == 0);
  }
}

TEST_CASE("CRLF line ends") {
  const std::string log = kNoise + "\r\n" + JobLine(1, "backward", 3, "10.000000", "12.500000") + "\r\n";
  const WorkerLogScan scan = ScanWorkerLogText("w.log", log, Parser());
  REQUIRE(scan.records.size() == 1);
  CHECK(scan.records[0].end == 12'500'000);
  CHECK(scan.records[0].line == 2);
  CHECK(scan.lines == 2);
}

TEST_CASE("A job ending before it starts is skipped with its line and the reason") {
  const std::string log = kNoise + "\n" + JobLine(1, "forward", 0, "20.000000", "10.000000") + "\n" +
                          JobLine(2, "forward", 1, "20.000000", "30.000000") + "\n";
  const WorkerLogScan scan = ScanWorkerLogText("w.log", log, Parser());
  REQUIRE(scan.records.size() == 1);
  CHECK(scan.records[0].job_id == "2");
  CHECK(scan.skipped.count(SkipReason::kEndBeforeStart) == 1);
  REQUIRE(scan.skipped.examples().size() == 1);
  CHECK(scan.skipped.examples()[0].line == 2);
  CHECK(scan.skipped.examples()[0].file == "w.log");
}

TEST_CASE("A micro-batch past what a Job holds is skipped with its line and the reason, by either parser") {
  // As printed (the one-pass parser's shape) and with a colour escape (the general way's).
  for (const std::string prefix : {"", "\x1b[0m"}) {
    const std::string kept = "Profiler Info: Job (1), type = forward, micro_batch_id = 2147483647, job_start_time = 1.000000, job_end_time = 2.000000";
    std::string past = kept;
    past.replace(past.find("2147483647"), 10, "2147483648");
    const std::string log = kNoise + "\n" + prefix + kept + "\n" + prefix + past + "\n";
    const WorkerLogScan scan = ScanWorkerLogText("w.log", log, Parser());
    REQUIRE(scan.records.size() == 1);
    CHECK(scan.records[0].micro_batch == kMaxMicroBatch);
    CHECK(scan.skipped.count(SkipReason::kBeyondLimits) == 1);
    REQUIRE(scan.skipped.examples().size() == 1);
    CHECK(scan.skipped.examples()[0].line == 3);
    CHECK(scan.skipped.examples()[0].detail == "micro-batch above 2147483647");
  }
}

TEST_CASE("A timer that never fired (time 0) is skipped") {
  const std::string log = JobLine(1, "forward", 0, "0.000000", "10.000000") + "\n";
  const WorkerLogScan scan = ScanWorkerLogText("w.log", log, Parser());
  CHECK(scan.records.empty());
  CHECK(scan.skipped.count(SkipReason::kTimerNeverFired) == 1);
}

TEST_CASE("A truncated last line is reported, a complete one without newline is kept") {
  const std::string complete = JobLine(1, "forward", 0, "10.000000", "12.000000");
  SECTION("cut inside the end time") {
    const std::string log = complete + "\n" + JobLine(2, "forward", 1, "13.000000", "14.00");
    const WorkerLogScan scan = ScanWorkerLogText("w.log", log, Parser());
    CHECK(scan.records.size() == 1);
    CHECK(scan.skipped.count(SkipReason::kTruncatedLastLine) == 1);
    CHECK(scan.lines == 2);
  }
  SECTION("cut before the end time") {
    const std::string log = complete + "\n" + complete.substr(0, complete.size() - 30);
    const WorkerLogScan scan = ScanWorkerLogText("w.log", log, Parser());
    CHECK(scan.records.size() == 1);
    CHECK(scan.skipped.count(SkipReason::kTruncatedLastLine) == 1);
  }
  SECTION("complete but unterminated") {
    const WorkerLogScan scan = ScanWorkerLogText("w.log", complete + "\n" + complete, Parser());
    CHECK(scan.records.size() == 2);
    CHECK(scan.skipped.total() == 0);
  }
}

TEST_CASE("NUL bytes and binary garbage do not hide the job lines around them") {
  std::string log = JobLine(1, "forward", 0, "10.000000", "12.000000") + "\n";
  log += std::string(5000, '\0');
  log += std::string("\xff\xfe\x01\x02 random binary\n", 20);
  log += JobLine(2, "forward", 1, "13.000000", "14.000000") + "\n";
  const WorkerLogScan scan = ScanWorkerLogText("w.log", log, Parser(), 512);
  CHECK(scan.records.size() == 2);
  CHECK(scan.records[1].line == 3);
}

TEST_CASE("Two records run together on one line are both kept") {
  const std::string a = "Profiler Info: Job (1), type = forward, micro_batch_id = 0, job_start_time = 10.000000, job_end_time = 11.000000";
  const std::string b = "Profiler Info: Job (2), type = forward, micro_batch_id = 1, job_start_time = 11.000000, job_end_time = 12.000000";
  const WorkerLogScan scan = ScanWorkerLogText("w.log", a + b + "\n", Parser());
  REQUIRE(scan.records.size() == 2);
  CHECK(scan.records[0].line == 1);
  CHECK(scan.records[1].line == 1);
}

TEST_CASE("Malformed lines are counted by kind with the column of the problem") {
  const std::string bad = "Profiler Info: Job (1), type = forward, micro_batch_id = x, job_start_time = 1.0, job_end_time = 2.0";
  const std::string log = kNoise + "\n" + bad + "\nNVTX range push: 7 time: 1.0\nClock Sync: rank = 1\n";
  const WorkerLogScan scan = ScanWorkerLogText("w.log", log, Parser());
  CHECK(scan.records.empty());
  CHECK(scan.skipped.count(SkipReason::kMalformedJob) == 1);
  CHECK(scan.skipped.count(SkipReason::kMalformedStepLine) == 1);
  CHECK(scan.skipped.count(SkipReason::kMalformedClockSync) == 1);
  const SkippedLine& first = scan.skipped.examples()[0];
  CHECK(first.line == 2);
  CHECK(first.column == bad.find(", micro_batch_id"));
  CHECK(first.detail == "expected ', micro_batch_id = <integer>'");
}

TEST_CASE("Empty and noise-only logs have no records") {
  CHECK(ScanWorkerLogText("w.log", "", Parser()).records.empty());
  const WorkerLogScan scan = ScanWorkerLogText("w.log", kNoise + "\n" + kNoise, Parser());
  CHECK(scan.records.empty());
  CHECK(scan.lines == 2);
}

TEST_CASE("A colour escape inside a field name of a long, bad job line is reported, not fatal") {
  // Found by fuzzing: the column search for "job_end_time" in the raw line
  // missed, and the skip report took npos for a column.
  const std::string line = std::string(200, 'x') +
                           "Profiler Info: Job (3), type = forward, micro_batch_id = 2, job_start_time = "
                           "1697793307213.760986, job_end_t\x1b[32mime = 1697793307200.000000" + std::string(50, 'y');
  const WorkerLogScan scan = ScanWorkerLogText("w", line + "\n", Parser());
  CHECK(scan.records.empty());
  REQUIRE(scan.skipped.examples().size() == 1);
  const SkippedLine& skipped = scan.skipped.examples()[0];
  CHECK(skipped.reason == SkipReason::kEndBeforeStart);
  CHECK(skipped.column <= skipped.text.size());
  for (const char* escape : {"\x1b[32m", "\x1b[", "\x1b[P", "\x1b[1;31m"})
    for (size_t at = 0; at < line.size(); at += 7) {
      std::string variant = line;
      variant.insert(at, escape);
      variant[(at * 13) % variant.size()] = ')';
      const WorkerLogScan each = ScanWorkerLogText("w", variant + "\n", Parser());
      for (const SkippedLine& s : each.skipped.examples()) CHECK(s.column <= s.text.size());
    }
}

TEST_CASE("Records carry the glog thread id of their line, 0 without a glog prefix; the start-up banner is a record") {
  std::string log;
  log += "W1020 09:15:01.101362 30112 gpu_resources.cc:119] Please NOTE: device: 0, GPU Compute Capability: 8.0, "
         "Driver API Version: 12.0\n";
  log += JobLine(0, "forward", 0, "1697793307213.760986", "1697793307254.006104") + "\n";
  log += "[2023-10-20 09:15:07,265] [    INFO] - Schedule Profiler start at step 2\n";
  log += "E1020 09:15:07.265326   513 x.cc:1] NVTX range pop, time: 1697793307290.113281\n";
  const WorkerLogScan scan = ScanWorkerLogText("w.log", log, Parser(), 4096);
  REQUIRE(scan.records.size() == 4);
  CHECK(scan.records[0].kind == RecordKind::kStartBanner);
  CHECK(scan.records[0].thread == 30112);
  CHECK(scan.records[1].thread == 22317);
  CHECK(scan.records[2].thread == 0);
  CHECK(scan.records[3].thread == 513);
  CHECK(scan.skipped.total() == 0);
}

// glog prints the thread id after the time of day, padded to five columns;
// the id is read as one word where the prefix has glog's own spacing and an
// id of up to seven digits, and byte by byte otherwise: both give the same.
TEST_CASE("The glog thread id is read whatever its width and spacing") {
  const std::string record = "x.cc:1] NVTX range pop,  time: 1697793307290.113281";  // (the general way: RE2)
  const std::vector<std::pair<std::string, std::uint32_t>> cases = {
      {"I1020 09:15:07.265326 22317 ", 22317},
      {"I1020 09:15:07.265326   513 ", 513},              // padded: the byte-by-byte way
      {"I1020 09:15:07.265326 7 ", 7},
      {"I1020 09:15:07.265326 1234567 ", 1234567},        // seven digits: one word
      {"I1020 09:15:07.265326 12345678 ", 12345678},      // eight: byte by byte
      {"I1020 09:15:07.265326 4294967295 ", 4294967295u},
      {"I1020 09:15:07.265326 4294967296 ", 0},           // no 32-bit id
      {"I1020 09:15:07.265326 22317x ", 0},
      {"I1020 09:15:07.265326 22317:", 0},
      {"I1020 09:15:07.2653 22317 ", 22317},              // a shorter time of day
      {"I1020 09:15:07.265326789 22317 ", 22317},         // a longer one
      {"F1020 09:15:07.265326 42 ", 42},
      {"X1020 09:15:07.265326 42 ", 0},                   // not a glog level
      {"I10a0 09:15:07.265326 42 ", 0},
  };
  for (const auto& [prefix, thread] : cases) {
    INFO(prefix);
    const WorkerLogScan scan = ScanWorkerLogText("w.log", prefix + record + "\n", Parser());
    REQUIRE(scan.records.size() == 1);
    CHECK(scan.records[0].thread == thread);
    // The same prefix on a job line as printed (the one-pass path).
    const std::string job = JobLine(1, "forward", 0, "1697793307213.760986", "1697793307254.006104");
    const WorkerLogScan jobs = ScanWorkerLogText("w.log", prefix + job.substr(job.find("Profiler")) + "\n", Parser());
    REQUIRE(jobs.records.size() == 1);
    CHECK(jobs.records[0].thread == thread);
  }
}

// Job lines as printed take a one-pass path; each variation below goes the
// general way instead. Either way a line gives the same record, thread and
// line number, or the same skip.
TEST_CASE("Job lines as printed and their variations give the same records") {
  const std::string printed = JobLine(4, "forward", 1, "1697793307213.760986", "1697793307254.006104");
  const std::string glog = "I1020 09:15:07.265326 22317 standalone_executor.cc:217] ";
  const std::string spaced =
      glog + "Profiler Info: Job ( 4 ), type =  forward, micro_batch_id = 1, "
             "job_start_time = 1697793307213.760986, job_end_time = 1697793307254.006104";
  const std::string coloured = "\x1b[32m" + printed + "\x1b[0m";
  const std::string tail = printed + " (rank 3)";
  for (const std::string& variant : {printed, spaced, coloured, tail}) {
    INFO(variant);
    const WorkerLogScan scan = ScanWorkerLogText("w.log", kNoise + "\n" + variant + "\n" + kNoise + "\n", Parser());
    REQUIRE(scan.records.size() == 1);
    const LogRecord& r = scan.records[0];
    CHECK(r.kind == RecordKind::kJob);
    CHECK(r.line == 2);
    CHECK(r.thread == (variant == coloured ? 0u : 22317u));  // an escape hides the glog prefix
    CHECK(r.job_id == "4");
    CHECK(r.type == "forward");
    CHECK(r.micro_batch == 1);
    CHECK(r.start == 1697793307213760986);
    CHECK(r.end == 1697793307254006104);
    CHECK(scan.lines == 3);
  }
  // Unusable times are skipped with their reason, whichever path read them.
  const std::string never = JobLine(5, "forward", 0, "0.000000", "1697793307254.006104");
  const std::string backwards = JobLine(6, "forward", 0, "1697793307254.006104", "1697793307213.760986");
  const WorkerLogScan scan = ScanWorkerLogText("w.log", never + "\n" + backwards + "\n", Parser());
  CHECK(scan.records.empty());
  CHECK(scan.skipped.total() == 2);
  // A last line cut inside its end time is not a job.
  const std::string cut = JobLine(7, "forward", 0, "1697793307213.760986", "1697793307254.00");
  const WorkerLogScan cut_scan = ScanWorkerLogText("w.log", printed + "\n" + cut, Parser());
  CHECK(cut_scan.records.size() == 1);
  CHECK(cut_scan.skipped.total() == 1);
}

TEST_CASE("Job ids and types keep their exact text, however many and however spelt") {
  // The scanner keeps the Names of small numeric ids and of its last types
  // itself: "07" is not "7", and a seventh type pushes no other out wrongly.
  const std::vector<std::string> ids = {"7", "07", "0", "00", "99", "127", "128", "999", "1000", "a1", "7", "07"};
  const std::vector<std::string> types = {"forward", "backward", "optimizer", "backward_b", "backward_w", "fwd", "forward"};
  std::string text;
  std::vector<std::pair<std::string, std::string>> written;
  for (int round = 0; round < 3; ++round)
    for (size_t i = 0; i < ids.size(); ++i) {
      const std::string& type = types[(i + static_cast<size_t>(round)) % types.size()];
      text += "I1020 09:15:07.265326 22317 standalone_executor.cc:217] Profiler Info: Job (" + ids[i] +
              "), type = " + type + ", micro_batch_id = 0, job_start_time = 1697793307213.760986, job_end_time = "
              "1697793307254.006104\n";
      written.emplace_back(ids[i], type);
    }
  const WorkerLogScan scan = ScanWorkerLogText("w.log", text, Parser());
  REQUIRE(scan.records.size() == written.size());
  for (size_t i = 0; i < written.size(); ++i) {
    INFO("line " << i + 1);
    CHECK(scan.records[i].job_id == written[i].first);
    CHECK(scan.records[i].type == written[i].second);
  }
  CHECK_FALSE(scan.records[0].job_id == scan.records[1].job_id);  // "7" and "07"
  CHECK(scan.records[0].job_id == scan.records[10].job_id);        // "7" both times: one Name
}

TEST_CASE("Step lines as printed and their variations give the same records") {
  const std::string glog = "I1020 09:15:07.000200 22317 nvtx_helper.cc:31] ";
  const std::string push = glog + "NVTX range push: 7, time: 1697793307000.179968";
  const std::string pop = glog + "NVTX range pop, time: 1697793312868.367616";
  auto spaced = [&](const std::string& line) {  // the general way: RE2
    std::string other = line;
    other.replace(other.find(", time"), 6, ",  time");
    return other;
  };
  for (const bool printed : {true, false}) {
    INFO((printed ? "as printed" : "spaced otherwise"));
    const std::string text = kNoise + "\n" + (printed ? push : spaced(push)) + "\n" + kNoise + "\n" +
                             (printed ? pop : spaced(pop)) + "\n";
    const WorkerLogScan scan = ScanWorkerLogText("w.log", text, Parser());
    REQUIRE(scan.records.size() == 2);
    CHECK(scan.records[0].kind == RecordKind::kStepPush);
    CHECK(scan.records[0].step == 7);
    CHECK(scan.records[0].start == 1697793307000179968);
    CHECK(scan.records[0].line == 2);
    CHECK(scan.records[1].kind == RecordKind::kStepPop);
    CHECK(scan.records[1].step == 0);
    CHECK(scan.records[1].start == 1697793312868367616);
    CHECK(scan.records[1].line == 4);
    for (const LogRecord& r : scan.records) CHECK(r.thread == 22317u);
    CHECK(scan.lines == 4);
  }
  // A last step line without its newline, cut inside its time: not taken as printed, skipped as cut short.
  const WorkerLogScan cut = ScanWorkerLogText("w.log", push + "\n" + pop.substr(0, pop.size() - 3), Parser());
  CHECK(cut.records.size() == 1);
  CHECK(cut.skipped.total() == 1);
}

}  // namespace unit_workerlog_scan_test
