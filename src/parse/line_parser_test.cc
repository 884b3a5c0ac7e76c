#include "parse/line_parser.h"

#include <catch2/catch.hpp>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_line_parser_test {

using namespace jobviz;
using Kind = ParsedLine::Kind;

namespace {

const LineParser& Parser() {
  static const LineParser parser;
  return parser;
}

ParsedLine Parse(std::string_view line) {
  static std::string scratch;
  return Parser().ParseFirst(line, &scratch);
}

constexpr std::string_view kJob =
    "Profiler Info: Job (3), type = forward, micro_batch_id = 2, "
    "job_start_time = 1697793307213.760986, job_end_time = 1697793307254.006104";

}  // namespace

TEST_CASE("Every sample line of every format parses to its own kind") {
  std::string scratch;
  for (const LineFormat& format : LineFormats())
    for (std::string_view sample : format.samples) {
      const ParsedLine parsed = Parser().ParseFirst(sample, &scratch);
      INFO(sample);
      CHECK(parsed.kind != Kind::kMalformed);
      CHECK(parsed.format == format.kind);
    }
}

TEST_CASE("Job line with and without a glog prefix") {
  for (std::string prefix : {"", "I1020 09:15:07.265326 22317 standalone_executor.cc:217] ",
                             "W0122 05:40:58.632920   513 device_context.cc:447] "}) {
    const std::string line = prefix + std::string(kJob);  // the result holds views into it
    const ParsedLine p = Parse(line);
    REQUIRE(p.kind == Kind::kJob);
    CHECK(p.job_id == "3");
    CHECK(p.type == "forward");
    CHECK(p.micro_batch == 2);
    CHECK(p.start.ns == 1697793307213760986);
    CHECK(p.end.ns == 1697793307254006104);
    CHECK(p.record_end == prefix.size() + kJob.size());
  }
}

TEST_CASE("Any word is a job type and the job id is opaque") {
  for (std::string type : {"backward_b1", "backward_w0", "forward0", "recv_forward", "lr", "default"}) {
    const std::string line = "Profiler Info: Job (7), type = " + type +
                             ", micro_batch_id = 0, job_start_time = 1.5, job_end_time = 2.5";
    const ParsedLine p = Parse(line);
    REQUIRE(p.kind == Kind::kJob);
    CHECK(p.type == type);
  }
  const ParsedLine p = Parse(
      "Profiler Info: Job (fwd-12), type = forward, micro_batch_id = 0, job_start_time = 1.5, "
      "job_end_time = 2.5");
  REQUIRE(p.kind == Kind::kJob);
  CHECK(p.job_id == "fwd-12");
}

TEST_CASE("Whole-millisecond start times of old logs") {
  const ParsedLine p = Parse(
      "Profiler Info: Job (0), type = forward, micro_batch_id = 0, job_start_time = 1697793307213, "
      "job_end_time = 1697793307254.006104");
  REQUIRE(p.kind == Kind::kJob);
  CHECK(p.start.ns == 1697793307213000000);
  CHECK(p.start.decimals == 0);
  CHECK(p.end.decimals == 6);
}

TEST_CASE("ANSI colour escapes are removed before parsing") {
  const ParsedLine p = Parse(
      "\x1b[32m[2023-10-20 09:15:07,265] [    INFO]\x1b[0m - \x1b[1mSchedule Profiler start at step "
      "\x1b[0m5 and end at step 10");
  REQUIRE(p.kind == Kind::kProfilerWindow);
  CHECK(p.start_step == 5);
  CHECK(p.end_step == 10);
}

TEST_CASE("NUL bytes and garbage before the record do not matter") {
  const std::string line = std::string("\0\0\0\xff\xfe garbage ", 14) + std::string(kJob);
  const ParsedLine p = Parse(line);
  REQUIRE(p.kind == Kind::kJob);
  CHECK(p.micro_batch == 2);
}

TEST_CASE("Profiler window line with and without its end step") {
  ParsedLine p = Parse("Schedule Profiler start at step 5 and end at step 10");
  REQUIRE(p.kind == Kind::kProfilerWindow);
  CHECK(p.start_step == 5);
  CHECK(p.end_step == 10);
  p = Parse("Schedule Profiler start at step 7");
  REQUIRE(p.kind == Kind::kProfilerWindow);
  CHECK(p.start_step == 7);
  CHECK(p.end_step == -1);
}

TEST_CASE("NVTX push and pop lines") {
  ParsedLine p = Parse("NVTX range push: 7, time: 1697793307213.760986");
  REQUIRE(p.kind == Kind::kStepPush);
  CHECK(p.step == 7);
  CHECK(p.time.ns == 1697793307213760986);
  p = Parse("I1020 09:15:07.265326 22317 x.cc:1] NVTX range pop, time: 1697793307290.113281");
  REQUIRE(p.kind == Kind::kStepPop);
  CHECK(p.time.ns == 1697793307290113281);
}

TEST_CASE("Clock sync line") {
  const ParsedLine p = Parse("Clock Sync: rank = 5, round = 3, time = 1697793307213.760986");
  REQUIRE(p.kind == Kind::kClockSync);
  CHECK(p.rank == 5);
  CHECK(p.round == 3);
  CHECK(p.time.ns == 1697793307213760986);
}

TEST_CASE("A malformed record says which field is wrong and where") {
  const std::string prefix = "I1020 09:15:07.265326 22317 x.cc:1] ";
  const std::string line = prefix +
                           "Profiler Info: Job (3), type = forward, micro_batch_id = two, "
                           "job_start_time = 1.0, job_end_time = 2.0";
  const ParsedLine p = Parse(line);
  REQUIRE(p.kind == Kind::kMalformed);
  CHECK(p.format == LineKind::kJob);
  CHECK(p.expected == ", micro_batch_id = <integer>");
  CHECK(p.error_column == line.find(", micro_batch_id"));

  const ParsedLine q = Parse("Profiler Info: Job (3), type = forward, micro_batch_id = 1, job_start_time = 1.0");
  REQUIRE(q.kind == Kind::kMalformed);
  CHECK(q.expected == ", job_end_time = <milliseconds>");

  const ParsedLine r = Parse("Profiler Info: Job 3, type = forward");
  REQUIRE(r.kind == Kind::kMalformed);
  CHECK(r.expected == "Profiler Info: Job (<id>)");
  CHECK(r.error_column == 0);
}

TEST_CASE("Numbers too large for 64 bits are malformed, not wrapped") {
  const ParsedLine p = Parse(
      "Profiler Info: Job (3), type = forward, micro_batch_id = 99999999999999999999, "
      "job_start_time = 1.0, job_end_time = 2.0");
  CHECK(p.kind == Kind::kMalformed);
  CHECK(p.expected == "numbers that fit in 64 bits");
}

TEST_CASE("Parsing resumes after the record, so a second record on the line is found") {
  const std::string line = std::string(kJob) + std::string(kJob);
  std::string scratch;
  const ParsedLine first = Parser().Parse(line, 0, 0, &scratch);
  REQUIRE(first.kind == Kind::kJob);
  CHECK(first.resume_at == kJob.size());
  const ParsedLine second = Parser().Parse(line, first.resume_at, 0, &scratch);
  REQUIRE(second.kind == Kind::kJob);
}

TEST_CASE("StripAnsiEscapes maps the keyword position") {
  std::string out;
  size_t position = 8;  // the K after two 4-byte escapes
  StripAnsiEscapes("\x1b[1m\x1b[0mK", &out, &position);
  CHECK(out == "K");
  CHECK(position == 0);
}

TEST_CASE("Step numbers leave room for the run in a step key") {
  CHECK(Parse("NVTX range push: 999999999999, time: 1.0").kind == Kind::kStepPush);
  const ParsedLine push = Parse("NVTX range push: 1000000000000, time: 1.0");
  CHECK(push.kind == Kind::kMalformed);
  CHECK(push.expected == "a step number below 1000000000000");
  CHECK(Parse("Schedule Profiler start at step 1000000000000 and end at step 4").kind == Kind::kMalformed);
}

// docs/bad-input.md: a topology line is read whole or skipped whole, with why.
TEST_CASE("A topology line with a value it cannot take is skipped whole, with the reason; unknown fields are ignored") {
  const auto reason = [](std::string_view line) {
    const ParsedLine p = Parse(line);
    return p.kind == Kind::kMalformed ? p.reason : std::string("read");
  };
  // Values the docs call valid whose products pass what a job can have: refused, never wrapped.
  CHECK(reason("HybridParallelInfo: rank_id: 3, pp_rank: 1, dp_rank: 999999, tp_rank: 999999") ==
        "its degrees and coordinates multiply to more than the 10,000,000 ranks a job can have");
  CHECK(reason("HybridParallelInfo: rank_id: 3, pp_rank: 1, sep_rank: 999999, tp_rank: 999") ==
        "its degrees and coordinates multiply to more than the 10,000,000 ranks a job can have");
  // Paddle's form: groups of 4,000 ranks on two axes (16,000,000 ranks).
  std::string groups = "HybridParallelInfo: rank_id: 0, dp_degree: 4000, sharding_degree: 4000, dp_group: [0";
  for (int r = 1; r < 4000; ++r) groups += ", " + std::to_string(r * 4000);
  groups += "], sharding_group: [0";
  for (int r = 1; r < 4000; ++r) groups += ", " + std::to_string(r);
  groups += "]";
  CHECK(reason(groups) == "its degrees and coordinates multiply to more than the 10,000,000 ranks a job can have");
  // A bad value of a field it reads: the line is skipped (not read up to it).
  CHECK(reason("HybridParallelInfo: rank_id: 1, pp_degree: -4, pp_group: [0, 1]") ==
        "pp_degree is not a whole number from 1 to 1000000");
  CHECK(reason("HybridParallelInfo: rank_id: 1, pp_rank: -1") == "pp_rank is not a whole number below 1000000");
  CHECK(reason("HybridParallelInfo: rank_id: 1, pp_degree: \xd9\xa4, pp_group: [0, 1]") ==
        "pp_degree is not a whole number from 1 to 1000000");
  CHECK(reason("HybridParallelInfo: rank_id: 1, pp_degree: 4, pp_group: [0, 0, 1, 1]") == "pp_group holds rank 0 twice");
  CHECK(reason("HybridParallelInfo: rank_id: 1000000000000, pp_rank: 0") ==
        "rank_id 1000000000000 is past the most ranks a job can have (10,000,000)");
  // A field it does not know, before the real ones: ignored, the rest read.
  const ParsedLine p = Parse("HybridParallelInfo: rank_id: 1, order: dp-pp-mp, pp_degree: 2, pp_group: [0, 1]");
  REQUIRE(p.kind == Kind::kHybridInfo);
  CHECK(p.place.at(ParallelAxis::kPp) == 1);
  CHECK(p.place.degree[static_cast<size_t>(ParallelAxis::kPp)] == 2);
  // Colour escapes around the message do not spoil the last value.
  const ParsedLine q = Parse("HybridParallelInfo: rank_id: 1, pp_rank: 1, tp_rank: 0\x1b[0m");
  REQUIRE(q.kind == Kind::kShimTopology);
  CHECK(q.place.at(ParallelAxis::kPp) == 1);
}

TEST_CASE("libjobviz's start line: its rank, the shared-log note, and other text with the same words left alone") {
  ParsedLine p = Parse("I1020 09:15:01.101362 22317 jobviz_profiler.cc:1] jobviz profiler: rank = 3, local worker = 1, "
                       "world size = 4, host = node7");
  CHECK(p.kind == Kind::kProfilerHeader);
  CHECK(p.rank == 3);
  CHECK(p.host == "node7");
  CHECK_FALSE(p.log_shared);
  p = Parse("jobviz profiler: rank = 2, local worker = 0, world size = 4, host = n, log shared with another live jobviz "
            "profiler");
  CHECK(p.rank == 2);
  CHECK(p.host == "n");
  CHECK(p.log_shared);
  p = Parse("jobviz profiler: rank = 2, local worker = 0, world size = 4");  // an older start line: no host
  CHECK(p.rank == 2);
  CHECK(p.host.empty());
  // Someone else's words: not a start line (rank -1: dropped by the scan), never a malformed line.
  for (std::string_view other : {"error: rank = 3 is not reachable", "jobviz profiler: rank unknown",
                                 "my profiler: rank = 4"}) {
    INFO(other);
    p = Parse(other);
    CHECK(p.kind == Kind::kProfilerHeader);
    CHECK(p.rank == -1);
  }
}

}  // namespace unit_line_parser_test
