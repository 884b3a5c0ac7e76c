#include "parse/event_fast.h"

#include <catch2/catch.hpp>

#include "parse/event_json.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_event_fast_test {

using namespace jobviz;

namespace {

LogRecord Job(Nanos start, Nanos end, std::int64_t micro_batch, std::uint64_t line, std::uint32_t thread,
              const std::string& type, const std::string& id) {
  LogRecord r;
  r.kind = RecordKind::kJob;
  r.start = start;
  r.end = end;
  r.micro_batch = micro_batch;
  r.line = line;
  r.thread = thread;
  r.type = type;
  r.job_id = id;
  return r;
}

bool Same(const LogRecord& a, const LogRecord& b) {
  return a.kind == b.kind && a.start == b.start && a.end == b.end && a.micro_batch == b.micro_batch && a.line == b.line &&
         a.thread == b.thread && a.type == b.type && a.job_id == b.job_id;
}

}  // namespace

TEST_CASE("A job as extract writes it is read without the JSON parser, to the JSON reader's record") {
  const LogRecord jobs[] = {
      Job(1697793307004090368, 1697793307004981248, 0, 1, 22705, "forward", "0"),
      Job(1, 1 + kLongestJob, kRunStride - 1, 1, 0, "backward_b1", "Job 12"),  // the widest values read; no thread
      Job(5, 5, 3, 40, UINT32_MAX, "optimizer", ""),                             // no duration, the largest thread
  };
  for (const LogRecord& job : jobs) {
    for (int worker : {0, 7, INT32_MAX}) {
      const std::string line = event_json::RecordJson(worker, job).dump();
      INFO(line);
      std::int64_t read_worker = -1;
      LogRecord read;
      REQUIRE(ReadCanonicalJob(line, &read_worker, &read));
      CHECK(read_worker == worker);
      CHECK(Same(read, event_json::RecordFrom(nlohmann::json::parse(line))));
      CHECK(Same(read, job));
    }
  }
}

TEST_CASE("Any other line is left to the JSON reader, which reads it or says what is wrong") {
  const std::string good = event_json::RecordJson(3, Job(100, 200, 2, 9, 7, "forward", "4")).dump();
  std::int64_t worker = 0;
  LogRecord r;
  REQUIRE(ReadCanonicalJob(good, &worker, &r));
  const auto replaced = [&](std::string_view from, std::string_view to) {
    std::string line = good;
    line.replace(line.find(from), from.size(), to);
    return line;
  };
  const std::string others[] = {
      replaced("\"s\":100", "\"s\":0"),                          // a timer that never fired: skipped by the JSON reader
      replaced("\"e\":200", "\"e\":99"),                         // ends before it starts
      replaced("\"e\":200", "\"e\":200.5"),                      // not an integer
      replaced("\"e\":200", "\"e\":-200"),                       // negative
      replaced("\"e\":200", "\"e\":0200"),                       // not JSON
      replaced("\"e\":200", "\"e\":99999999999999999999"),       // past 64 bits
      replaced("\"mb\":2", "\"mb\":1000000000000"),              // past the run stride
      replaced("\"l\":9", "\"l\":0"),                            // not a line number
      replaced("\"th\":7", "\"th\":4294967296"),                 // not a thread id
      replaced("\"t\":\"forward\"", "\"t\":\"for\\u0077ard\""),  // an escape
      replaced("\"t\":\"forward\"", "\"t\":\"f\xc3\xa9\""),      // past ASCII: UTF-8 checked there
      replaced("\"k\":\"job\"", "\"k\":\"inflight\""),           // another kind
      replaced(",\"mb\"", ", \"mb\""),                           // a space
      replaced("\"w\":3}", "\"w\":3,\"x\":1}"),                  // a member more
      good + " ",
      good.substr(0, good.size() - 1),
  };
  for (const std::string& line : others) {
    INFO(line);
    CHECK_FALSE(ReadCanonicalJob(line, &worker, &r));
  }
}

}  // namespace unit_event_fast_test
