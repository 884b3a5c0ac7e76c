#include "parse/job_line_matcher.h"

#include <catch2/catch.hpp>
#include <string>

#include "parse/line_parser.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_job_line_matcher_test {

using namespace jobviz;

namespace {

const LineParser& Parser() {
  static const LineParser parser;
  return parser;
}

constexpr std::string_view kJob =
    "Profiler Info: Job (3), type = forward, micro_batch_id = 2, "
    "job_start_time = 1697793307213.760986, job_end_time = 1697793307254.006104";

}  // namespace

TEST_CASE("The matcher finds each group of a job line") {
  const std::string line = "I1020 09:15:07.265326 22317 standalone_executor.cc:217] " + std::string(kJob) + " tail";
  JobLineMatch m;
  REQUIRE(MatchJobLine(line, line.find("Profiler"), &m));
  CHECK(m.id == "3");
  CHECK(m.type == "forward");
  CHECK(m.micro_batch == "2");
  CHECK(m.start == "1697793307213.760986");
  CHECK(m.end == "1697793307254.006104");
  CHECK(m.whole == kJob);  // the trailing " tail" is not part of the record
}

TEST_CASE("The matcher follows the pattern's spacing, id, number and word rules") {
  struct Case {
    std::string line;
    bool matches;
  };
  const std::vector<Case> cases = {
      {"Profiler Info: Job(3),type=forward,micro_batch_id=2,job_start_time=1,job_end_time=2", true},
      {"Profiler Info: Job \t( 3 ),\f type =\tforward ,micro_batch_id = 2,job_start_time = 1.,job_end_time = 2",
       false},  // no space is allowed before a comma
      {"Profiler Info: Job \t(\r3 ),\f type =\tforward,micro_batch_id = 2,job_start_time = 1.,job_end_time = 2", true},
      {"Profiler Info: Job (a\xe9-b:c), type = x, micro_batch_id = 0, job_start_time = 1, job_end_time = 2", true},
      {"Profiler Info: Job (a b), type = x, micro_batch_id = 0, job_start_time = 1, job_end_time = 2", false},
      {"Profiler Info: Job (), type = x, micro_batch_id = 0, job_start_time = 1, job_end_time = 2", false},
      {"Profiler Info: Job (\v), type = x, micro_batch_id = 0, job_start_time = 1, job_end_time = 2", true},
      {"Profiler Info: Job (1), type = x-y, micro_batch_id = 0, job_start_time = 1, job_end_time = 2", false},
      {"Profiler Info: Job (1), type = \xe9, micro_batch_id = 0, job_start_time = 1, job_end_time = 2", false},
      {"Profiler Info: Job (1), type = x, micro_batch_id = -1, job_start_time = 1, job_end_time = 2", false},
      {"Profiler Info: Job (1), type = x, micro_batch_id = 0, job_start_time = .5, job_end_time = 2", false},
      {"Profiler Info: Job (1), type = x, micro_batch_id = 0, job_start_time = 1, job_end_time = 2.5.6", true},
      {"Profiler Info: Job (1), type = x, micro_batch_id = 0, job_start_time = 1, job_end_time = ", false},
      {"Profiler Info: Job (1), type = x, micro_batch_id = 0, job_start_time = 1", false},
      {"Profiler Info: Job (1), type = x, micro_batch_id = 0, job_end_time = 1, job_start_time = 2", false},
      {"Profiler Info: Job", false},
      {"", false},
  };
  for (const Case& c : cases) {
    INFO(c.line);
    JobLineMatch m;
    CHECK(MatchJobLine(c.line, 0, &m) == c.matches);
    CHECK(Parser().JobMatcherAgrees(c.line, 0));
  }
  JobLineMatch m;
  REQUIRE(MatchJobLine(cases[11].line, 0, &m));
  CHECK(m.end == "2.5");  // the greedy fraction stops at the second '.'
  CHECK_FALSE(MatchJobLine(kJob, kJob.size() + 1, &m));  // past the end
}

// Every one-byte change, deletion and doubling of a job line: the matcher
// and RE2 agree on each (both refuse, or both find the same groups).
TEST_CASE("The matcher agrees with RE2 on every small edit of a job line") {
  const std::string base = std::string(kJob) + ", more";
  const std::string bytes = std::string(" \t\v\f\r\n(),.=:_0a9ZJ-\xe9\xff") + '\0';
  size_t checked = 0;
  for (size_t i = 0; i < base.size(); ++i) {
    for (char b : bytes) {
      std::string edited = base;
      edited[i] = b;
      INFO("byte " << i << " set to " << static_cast<int>(static_cast<unsigned char>(b)));
      CHECK(Parser().JobMatcherAgrees(edited, 0));
      ++checked;
    }
    std::string deleted = base;
    deleted.erase(i, 1);
    CHECK(Parser().JobMatcherAgrees(deleted, 0));
    std::string doubled = base;
    doubled.insert(i, 1, base[i]);
    CHECK(Parser().JobMatcherAgrees(doubled, 0));
    checked += 2;
  }
  CHECK(checked > 2000);
}

TEST_CASE("Job lines parse the same through the matcher as through the pattern") {
  static std::string scratch;
  const std::string line = "W0122 05:40:58.632920   513 x.cc:1] " + std::string(kJob);
  const ParsedLine p = Parser().ParseFirst(line, &scratch);
  REQUIRE(p.kind == ParsedLine::Kind::kJob);
  CHECK(p.job_id == "3");
  CHECK(p.type == "forward");
  CHECK(p.micro_batch == 2);
  CHECK(p.start.ns == 1697793307213760986);
  CHECK(p.record_end == line.size());
}

TEST_CASE("The one-pass parser reads a job line as printed, numbers and all") {
  const std::string line = "I1020 09:15:07.265326 22317 standalone_executor.cc:217] " + std::string(kJob) + "\n";
  CanonicalJob job;
  REQUIRE(ParseCanonicalJobLine(line, line.find("Profiler"), &job));
  CHECK(job.id == "3");
  CHECK(job.type == "forward");
  CHECK(job.micro_batch == 2);
  CHECK(job.start.ns == 1697793307213760986);
  CHECK(job.start.decimals == 6);
  CHECK(job.end.ns == 1697793307254006104);
  CHECK(job.record_end == line.size() - 1);
  CHECK(Parser().JobMatcherAgrees(line, line.find("Profiler")));
}

TEST_CASE("The one-pass parser leaves every other spelling to the general path") {
  struct Case {
    std::string line;
    bool taken;
  };
  const std::string tail = ", type = x, micro_batch_id = 0, job_start_time = 1.5, job_end_time = 2";
  const std::vector<Case> cases = {
      {"Profiler Info: Job (fwd-3.a:b)" + tail, true},
      {"Profiler Info: Job (7), type = x, micro_batch_id = 0, job_start_time = 1., job_end_time = 2.1234567", true},
      {"Profiler Info: Job(3)" + tail, false},                   // other spacing
      {"Profiler Info: Job ( 3 )" + tail, false},
      {"Profiler Info: Job (a\xe9)" + tail, false},              // an id byte outside ASCII
      {"Profiler Info: Job (\x1b[1m3)" + tail, false},           // a colour escape in the id
      {"Profiler Info: Job (3),type = x, micro_batch_id = 0, job_start_time = 1, job_end_time = 2", false},
      {"Profiler Info: Job (3), type = x, micro_batch_id = 1234567890123456789, job_start_time = 1, job_end_time = 2",
       false},                                                   // 19 digits: left to from_chars
      {"Profiler Info: Job (3), type = x, micro_batch_id = 0, job_start_time = 12345678901234, job_end_time = 2",
       false},                                                   // 14 whole digits of milliseconds
      {"Profiler Info: Job (3), type = x, micro_batch_id = 0, job_start_time = 9300000000000, job_end_time = 2",
       false},                                                   // too many milliseconds for Nanos
      {"Profiler Info: Job (3), type = x, micro_batch_id = 0, job_start_time = 9223372036854.000000, job_end_time = 2",
       false},                                                   // the same, in the printed shape
      {"Profiler Info: Job (3), type = x, micro_batch_id = 0, job_start_time = 9223372036853.999999, job_end_time = "
       "9223372036853.999999\n",
       true},                                                    // the most there can be
      {"Profiler Info: Job (3), type = x, micro_batch_id = 0, job_start_time = 1, job_end_time = ", false},
      {"Profiler Info: Job (3), type = x, micro_batch_id = 0, job_start_time = 1", false},
  };
  for (const Case& c : cases) {
    INFO(c.line);
    CanonicalJob job;
    CHECK(ParseCanonicalJobLine(c.line, 0, &job) == c.taken);
    CHECK(Parser().JobMatcherAgrees(c.line, 0));
  }
  CanonicalJob job;
  REQUIRE(ParseCanonicalJobLine(cases[1].line, 0, &job));
  CHECK(job.end.ns == 2'123'456);  // decimals past the sixth dropped, as ParseMillis does
  CHECK(job.end.decimals == 7);
  CHECK(job.start.decimals == 0);
  REQUIRE(ParseCanonicalJobLine(cases[11].line, 0, &job));
  CHECK(job.start.ns == 9'223'372'036'853'999'999);
  CHECK(job.end.ns == 9'223'372'036'853'999'999);
  CHECK(job.end.decimals == 6);
  CHECK_FALSE(ParseCanonicalJobLine(kJob, kJob.size() + 1, &job));
}

// The numbers are read eight digits at a time where the text has room, one
// at a time near its end: every length, with the text ending at several
// distances behind the number, reads as the general path reads it.
TEST_CASE("The one-pass parser reads numbers of every length as ParseMillis does") {
  const std::string digits = "1234567890123456789012";
  size_t taken = 0;
  for (size_t whole = 1; whole <= 15; ++whole)
    for (int fraction = -1; fraction <= 10; ++fraction)  // -1: no '.'
      for (const std::string after : {"", "\n", ", rank 0 of 8 in all", "x"}) {
        std::string number = digits.substr(0, whole);
        if (fraction >= 0) number += "." + digits.substr(3, static_cast<size_t>(fraction));
        const std::string line = "Profiler Info: Job (1), type = x, micro_batch_id = " + digits.substr(0, whole) +
                                 ", job_start_time = " + number + ", job_end_time = " + number + after;
        INFO(line);
        CHECK(Parser().JobMatcherAgrees(line, 0));
        CanonicalJob job;
        if (!ParseCanonicalJobLine(line, 0, &job)) continue;
        ++taken;
        const auto expected = ParseMillis(number);
        REQUIRE(expected.has_value());
        CHECK(job.start.ns == expected->ns);
        CHECK(job.end.decimals == expected->decimals);
        CHECK(std::to_string(job.micro_batch) == digits.substr(0, whole));
      }
  CHECK(taken == 13 * 12 * 4);  // whole milliseconds up to 13 digits
}

TEST_CASE("The one-pass step line parser reads pushes and pops as printed and leaves the rest to RE2") {
  const std::string push = "I1020 09:15:07.000200 22317 nvtx_helper.cc:31] NVTX range push: 12, time: 1697793307000.179968\n";
  const std::string pop = "I1020 09:15:12.868352 22317 nvtx_helper.cc:40] NVTX range pop, time: 1697793312868.367616\n";
  CanonicalStep step;
  REQUIRE(ParseCanonicalStepLine(push, push.find("NVTX"), &step));
  CHECK(step.push);
  CHECK(step.step == 12);
  CHECK(step.time.ns == 1697793307000179968);
  CHECK(step.time.decimals == 6);
  CHECK(step.record_end == push.size() - 1);
  REQUIRE(ParseCanonicalStepLine(pop, pop.find("NVTX"), &step));
  CHECK_FALSE(step.push);
  CHECK(step.time.ns == 1697793312868367616);
  CHECK(step.record_end == pop.size() - 1);
  // Other spellings: a named range, other spacing, a step past 12 digits.
  for (const char* other : {"NVTX range push: LlamaDecoderLayerAuto_fwd, time: 1697793307000.179968",
                            "NVTX range push:12, time: 1697793307000.179968", "NVTX range  pop, time: 1",
                            "NVTX range push: 1000000000000, time: 1697793307000.179968",
                            "NVTX range push: 12 , time: 1697793307000.179968", "NVTX range popped, time: 1"}) {
    INFO(other);
    CHECK_FALSE(ParseCanonicalStepLine(other, 0, &step));
    CHECK(Parser().CanonicalStepAgrees(other, 0));
  }
  // Every small edit of both: wherever the one-pass parser takes a record, RE2's is the same.
  const std::string bytes = std::string(" \t\r\n,.:_0a9p-\xff") + '\0';
  size_t taken = 0;
  for (const std::string& base : {push, pop}) {
    for (size_t i = 0; i < base.size(); ++i) {
      for (char b : bytes) {
        std::string edited = base;
        edited[i] = b;
        INFO(edited);
        const size_t at = edited.find("NVTX range");
        CHECK(Parser().CanonicalStepAgrees(edited, at == std::string::npos ? 0 : at));
        taken += at != std::string::npos && ParseCanonicalStepLine(edited, at, &step);
      }
    }
  }
  CHECK(taken > 100);  // edits of the prefix, the step and the digits of the time are still taken
}

}  // namespace unit_job_line_matcher_test
