#include "parse/event_fast.h"

#include <catch2/catch.hpp>
#include <tuple>

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
         a.thread == b.thread && a.type == b.type && a.job_id == b.job_id && a.step == b.step &&
         a.window_end_step == b.window_end_step && a.rank == b.rank && a.place == b.place;
}

LogRecord Window(std::int64_t step, std::int64_t end, std::uint64_t line, std::uint32_t thread) {
  LogRecord r;
  r.kind = RecordKind::kProfilerWindow;
  r.step = step;
  r.window_end_step = end;
  r.line = line;
  r.thread = thread;
  return r;
}

LogRecord Topology(RecordKind kind, std::int64_t rank, AxisValues at, AxisValues of, std::uint32_t thread) {
  LogRecord r;
  r.kind = kind;
  r.rank = rank;
  r.place.index = at;
  r.place.degree = of;
  r.line = 1;
  r.thread = thread;
  return r;
}

}  // namespace

TEST_CASE("A job as extract writes it is read without the JSON parser, to the JSON reader's record") {
  const LogRecord jobs[] = {
      Job(1697793307004090368, 1697793307004981248, 0, 1, 22705, "forward", "0"),
      Job(1, 1 + kLongestJob, kMaxMicroBatch, kMaxJobLine, 0, "backward_b1", "Job 12"),  // the widest values read; no thread
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

TEST_CASE("Numbers of every width are read exactly, eight digits at a time or one by one") {
  // A window's line number: any count in 63 bits.
  const std::string good = event_json::RecordJson(3, Window(4, 6, 9, 7)).dump();
  for (const std::string digits : {"1", "12345678", "123456789", "1234567890123456", "12345678901234567",
                                   "1234567890123456789", "9223372036854775807"}) {
    std::string line = good;
    line.replace(line.find("\"l\":9"), 5, "\"l\":" + digits);
    INFO(line);
    std::int64_t worker = 0;
    LogRecord r;
    REQUIRE(ReadCanonicalRecord(line, &worker, &r));
    CHECK(r.line == std::stoull(digits));
    CHECK(Same(r, event_json::RecordFrom(nlohmann::json::parse(line))));
  }
  for (const std::string digits : {"9223372036854775808", "12345678901234567890", "0123456789", "00000000"}) {
    std::string line = good;
    line.replace(line.find("\"l\":9"), 5, "\"l\":" + digits);
    INFO(line);
    std::int64_t worker = 0;
    LogRecord r;
    CHECK_FALSE(ReadCanonicalRecord(line, &worker, &r));
  }
}

TEST_CASE("A job past what a Job holds is left to the JSON reader, which skips it and says why") {
  const LogRecord widest = Job(100, 200, kMaxMicroBatch, kMaxJobLine, 7, "forward", "4");
  const std::string good = event_json::RecordJson(3, widest).dump();
  std::int64_t worker = 0;
  LogRecord r;
  REQUIRE(ReadCanonicalJob(good, &worker, &r));
  CHECK(Same(r, widest));
  for (const auto& [from, to, why] : {std::tuple{"\"mb\":2147483647", "\"mb\":2147483648", "'mb' is above 2147483647"},
                                      std::tuple{"\"l\":4294967295", "\"l\":4294967296", "'l' is past line 4294967295"}}) {
    std::string line = good;
    line.replace(line.find(from), std::string_view(from).size(), to);
    INFO(line);
    CHECK_FALSE(ReadCanonicalJob(line, &worker, &r));
    try {
      event_json::RecordFrom(nlohmann::json::parse(line));
      FAIL("read");
    } catch (const event_json::BadRecord& e) {
      CHECK(e.reason == SkipReason::kBeyondLimits);
      CHECK(std::string(e.what()) == why);
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

TEST_CASE("Window and topology records as extract writes them are read without the JSON parser, to its record") {
  const LogRecord records[] = {
      Window(0, 5, 2, 23117),
      Window(kRunStride - 1, kRunStride - 1, 7, 0),  // the widest steps; no thread
      Window(3, 3, 1, UINT32_MAX),
      Topology(RecordKind::kShimTopology, 800, {6, 4, 0, 0, 0}, {16, 8, 1, 1, 1024}, 23117),
      Topology(RecordKind::kHybridInfo, 0, {0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}, 0),  // degrees unknown
      Topology(RecordKind::kShimTopology, 9'999'999, {999'999, 9, 0, 0, 0}, {1'000'000, 10, 1, 1, 1}, 5),
  };
  for (const LogRecord& record : records) {
    const std::string line = event_json::RecordJson(4, record).dump();
    INFO(line);
    std::int64_t worker = -1;
    LogRecord read;
    REQUIRE(ReadCanonicalRecord(line, &worker, &read));
    CHECK(worker == 4);
    CHECK(Same(read, event_json::RecordFrom(nlohmann::json::parse(line))));
    CHECK(Same(read, record));
  }
  // And every job line too.
  const std::string job = event_json::RecordJson(3, Job(100, 200, 2, 9, 7, "forward", "4")).dump();
  std::int64_t worker = -1;
  LogRecord read;
  REQUIRE(ReadCanonicalRecord(job, &worker, &read));
  CHECK(Same(read, event_json::RecordFrom(nlohmann::json::parse(job))));
}

TEST_CASE("A window or topology record out of the JSON reader's ranges, or in another form, is left to it") {
  const std::string window = event_json::RecordJson(3, Window(2, 6, 2, 9)).dump();
  const std::string topology =
      event_json::RecordJson(3, Topology(RecordKind::kShimTopology, 12, {1, 2, 0, 0, 0}, {2, 8, 1, 1, 1}, 9)).dump();
  std::int64_t worker = 0;
  LogRecord r;
  REQUIRE(ReadCanonicalRecord(window, &worker, &r));
  REQUIRE(ReadCanonicalRecord(topology, &worker, &r));
  const auto replaced = [](std::string line, std::string_view from, std::string_view to) {
    REQUIRE(line.find(from) != std::string::npos);
    return line.replace(line.find(from), from.size(), to);
  };
  const std::string others[] = {
      replaced(window, "\"end\":6", "\"end\":-1"),                    // the JSON reader reads it (no end step)
      replaced(window, "\"step\":2", "\"step\":1000000000000"),       // past the run stride
      replaced(window, "\"l\":2", "\"l\":0"),                         // not a line number
      replaced(window, "\"th\":9", "\"th\":4294967296"),              // not a thread id
      replaced(window, "\"w\":3}", "\"w\":2147483648}"),              // not a worker
      replaced(topology, "\"at\":[1,2,0,0,0]", "\"at\":[1,9,0,0,0]"),  // a coordinate past its degree
      replaced(topology, "\"at\":[1,2,0,0,0]", "\"at\":[1,2,0,0]"),    // an axis short
      replaced(topology, "\"of\":[2,8,1,1,1]", "\"of\":[2,8,1,1,1000001]"),
      replaced(topology, "\"rank\":12", "\"rank\":10000000"),         // more ranks than a job has
      replaced(topology, "\"rank\":12", "\"rank\":-1"),
      replaced(topology, "\"k\":\"topology\"", "\"k\":\"other\""),
      replaced(topology, ",\"of\"", ", \"of\""),                       // a space
      window + " ",
      "{\"end\":\"jobviz-events\",\"records\":3}",                      // the end line
  };
  for (const std::string& line : others) {
    INFO(line);
    CHECK_FALSE(ReadCanonicalRecord(line, &worker, &r));
  }
}

}  // namespace unit_event_fast_test
