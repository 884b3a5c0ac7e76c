#include "commands/printed_steps.h"

#include <catch2/catch.hpp>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_printed_steps_test {

using namespace jobviz;

namespace {

// Two logs of ten steps, lines 10*s+1 .. 10*s+3 holding step s's jobs.
class TwoLogs : public FollowedSource {
 public:
  TwoLogs() {
    for (const char* name : {"m0/workerlog.0", "m0/workerlog.1"}) {
      logs_.emplace_back(name);
      WorkerLogScan part;
      for (std::uint64_t step = 0; step < 10; ++step)
        for (std::uint64_t j = 1; j <= 3; ++j) {
          LogRecord job;
          job.line = 10 * step + j;
          job.start = static_cast<Nanos>(job.line);
          job.end = job.start + 1;
          part.records.push_back(job);
        }
      part.lines = 100;
      logs_.back().Append(std::move(part));
    }
  }
  Poll PollAll(const LineParser&) override { return {}; }
  const LogSet& logs() const override { return set_; }
  size_t size() const override { return logs_.size(); }
  FollowedRecords& log(size_t i) override { return logs_[i]; }
  const FollowedRecords& log(size_t i) const override { return logs_[i]; }
  const std::set<std::string>& gone() const override { return gone_; }
  std::vector<std::string> Directories() const override { return {}; }

 private:
  std::vector<FollowedRecords> logs_;
  LogSet set_;
  std::set<std::string> gone_;
};

std::uint64_t FirstJobLine(const std::vector<LogRecord>& records) {
  for (const LogRecord& r : records)
    if (r.kind == RecordKind::kJob) return r.line;
  return 0;
}

PrintedSteps::FirstLineOf FirstLines(std::int64_t step) {
  const std::uint64_t line = 10 * static_cast<std::uint64_t>(step) + 1;
  return {{"m0/workerlog.0", line}, {"m0/workerlog.1", line}, {"gone/workerlog.0", line}};
}

}  // namespace

TEST_CASE("Printed steps: which are new, their median, what the outputs show") {
  PrintedSteps printed;
  const std::vector<StepSpan> steps = {{0, 0, 10}, {1, 10, 30}, {2, 30, 40}, {3, 40, 100}};
  CHECK_FALSE(printed.any());
  CHECK(printed.FirstNew(steps, 4) == 0);
  CHECK(printed.MedianSeconds() == 0);
  for (size_t s = 0; s < 3; ++s) printed.Add(steps[s], {});
  CHECK(printed.count() == 3);
  CHECK(printed.last() == 2);
  CHECK(printed.FirstNew(steps, 4) == 3);
  CHECK(printed.MedianSeconds() == Approx(10e-9));
  // A restarted run counts its steps again: a step 1 after step 2 ended is new.
  CHECK(printed.FirstNew({{1, 50, 60}}, 1) == 0);
  CHECK(printed.Shown(0).first == kNoStep);
  CHECK(printed.Shown(0).last == 2);
  CHECK(printed.Shown(2).first == 1);
}

TEST_CASE("Printed steps move each log's cursor to the last one, and --keep-steps drops at twice N") {
  TwoLogs source;
  PrintedSteps printed;
  for (std::int64_t s = 0; s < 4; ++s) printed.Add({s, 10 * s, 10 * s + 9}, FirstLines(s));
  printed.MoveCursors(source, 2, 2);  // a log named that is not followed is passed over
  for (size_t i = 0; i < source.size(); ++i) {
    CHECK(FirstJobLine(source.log(i).ScanFromCursor().records) == 31);  // from step 3 on
    CHECK(FirstJobLine(source.log(i).scan().records) == 1);  // 4 steps held: not yet 2 x 2
  }
  printed.Add({4, 40, 49}, FirstLines(4));
  printed.MoveCursors(source, 2, 2);
  for (size_t i = 0; i < source.size(); ++i) {
    CHECK(FirstJobLine(source.log(i).ScanFromCursor().records) == 41);
    CHECK(FirstJobLine(source.log(i).scan().records) == 31);  // 5 held: down to the last 2 (steps 3, 4)
  }
  CHECK(printed.Shown(2).first == 3);
  // Nothing new: no cursor is set again, nothing more goes.
  source.log(0).SetCursor(0, 0);
  const size_t held = source.log(0).scan().records.size();
  printed.MoveCursors(source, 2, 2);
  CHECK(source.log(0).scan().records.size() == held);
  CHECK(source.log(0).ScanFromCursor().records.size() == held);
}

}  // namespace unit_printed_steps_test
