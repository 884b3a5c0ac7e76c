#include "model/step_finder.h"

#include <algorithm>
#include <catch2/catch.hpp>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_step_finder_test {

using namespace jobviz;

namespace {

constexpr Nanos kMs = 1'000'000;

Job MakeJob(const std::string& type, std::int64_t mb, Nanos start_ms, Nanos end_ms, std::uint64_t line) {
  return Job{std::to_string(line), type, mb, start_ms * kMs, end_ms * kMs, line, kNoStep};
}

LogRecord Marker(RecordKind kind, std::uint64_t line, Nanos time_ms, std::int64_t step = 0) {
  LogRecord r;
  r.kind = kind;
  r.line = line;
  r.start = time_ms * kMs;
  r.step = step;
  return r;
}

Timeline OneWorker(Worker worker) {
  Timeline t;
  t.machines.emplace_back("m");
  worker.file = "w";
  t.machines[0].workers.push_back(std::move(worker));
  return t;
}

}  // namespace

TEST_CASE("A step's span widens to each of its jobs; a new step goes in step order, after the spans kept before") {
  std::vector<StepSpan> spans = {{7, 0, 5}};  // an earlier run's, left alone
  size_t last = 1;
  const struct {
    std::int64_t step;
    Nanos start, end;
  } jobs[] = {{2, 100, 110}, {2, 105, 130}, {4, 300, 310}, {3, 200, 220}, {2, 90, 95}, {4, 290, 320}};
  for (const auto& job : jobs) WidenStepSpan(spans, 1, last, job.step, job.start, job.end);
  REQUIRE(spans.size() == 4);
  CHECK((spans[0].step == 7 && spans[0].start == 0 && spans[0].end == 5));
  CHECK((spans[1].step == 2 && spans[1].start == 90 && spans[1].end == 130));
  CHECK((spans[2].step == 3 && spans[2].start == 200 && spans[2].end == 220));
  CHECK((spans[3].step == 4 && spans[3].start == 290 && spans[3].end == 320));
}

TEST_CASE("NVTX steps: pops pair with the latest push, stray pops are counted") {
  Worker w;
  w.markers = {Marker(RecordKind::kStepPop, 1, 0), Marker(RecordKind::kStepPush, 2, 100, 7),
               Marker(RecordKind::kStepPop, 3, 200), Marker(RecordKind::kStepPush, 4, 210, 8),
               Marker(RecordKind::kStepPop, 5, 300)};
  w.jobs = {MakeJob("forward", 0, 110, 120, 10), MakeJob("forward", 0, 220, 230, 11),
            MakeJob("default", 0, 50, 60, 12)};
  std::sort(w.jobs.begin(), w.jobs.end(), [](const Job& a, const Job& b) { return a.start < b.start; });
  Timeline t = OneWorker(w);
  const StepFinding f = FindSteps(t);
  CHECK(f.skipped.count(SkipReason::kUnmatchedStepPop) == 1);
  CHECK(t.step_source == StepSource::kNvtx);
  REQUIRE(t.steps.size() == 2);
  CHECK(t.steps[0].step == 7);
  CHECK(t.steps[0].start == 100 * kMs);
  CHECK(t.steps[0].end == 200 * kMs);
  CHECK(t.steps[1].step == 8);
  const auto& jobs = t.machines[0].workers[0].jobs;
  CHECK(jobs[0].step == kNoStep);  // before the first push
  CHECK(jobs[1].step == 7);
  CHECK(jobs[2].step == 8);
}

TEST_CASE("NVTX steps reach to their last job when the pop came first (launch-time ranges)") {
  Worker w;
  w.markers = {Marker(RecordKind::kStepPush, 1, 100, 3), Marker(RecordKind::kStepPop, 2, 101)};
  w.jobs = {MakeJob("forward", 0, 110, 150, 3), MakeJob("backward", 0, 150, 190, 4)};
  Timeline t = OneWorker(w);
  FindSteps(t);
  REQUIRE(t.steps.size() == 1);
  CHECK(t.steps[0].start == 100 * kMs);
  CHECK(t.steps[0].end == 190 * kMs);
}

TEST_CASE("NVTX push never popped reaches to its last job") {
  Worker w;
  w.markers = {Marker(RecordKind::kStepPush, 1, 100, 3)};
  w.jobs = {MakeJob("forward", 0, 110, 150, 2), MakeJob("backward", 0, 150, 190, 3)};
  Timeline t = OneWorker(w);
  FindSteps(t);
  REQUIRE(t.steps.size() == 1);
  CHECK(t.steps[0].end == 190 * kMs);
}

TEST_CASE("Heuristic: the first non-default type with micro-batch 0 starts a step, named from the profiler window") {
  Worker w;
  w.markers = {Marker(RecordKind::kProfilerWindow, 1, 0, 5)};
  // Printed per step in job order: step 5 then step 6.
  w.jobs = {MakeJob("default", 0, 0, 1, 2),   MakeJob("forward", 0, 1, 2, 3),
            MakeJob("forward", 1, 2, 3, 4),   MakeJob("backward", 0, 3, 5, 5),
            MakeJob("backward", 1, 5, 7, 6),  MakeJob("forward", 0, 10, 11, 7),
            MakeJob("forward", 1, 11, 12, 8), MakeJob("backward", 0, 12, 14, 9),
            MakeJob("backward", 1, 14, 16, 10)};
  Timeline t = OneWorker(w);
  const StepFinding f = FindSteps(t);
  CHECK(f.warnings.empty());
  CHECK(t.step_source == StepSource::kHeuristic);
  REQUIRE(t.steps.size() == 2);
  CHECK(t.steps[0].step == 5);
  CHECK(t.steps[0].start == 0);
  CHECK(t.steps[0].end == 7 * kMs);
  CHECK(t.steps[1].step == 6);
  CHECK(t.steps[1].start == 10 * kMs);
  const auto& jobs = t.machines[0].workers[0].jobs;
  CHECK(jobs[0].step == 5);  // the leading default job belongs to the first block
  CHECK(jobs[4].step == 5);
  CHECK(jobs[5].step == 6);
}

TEST_CASE("Heuristic: steps merge across workers and do not start before the previous ends") {
  Timeline t;
  t.machines.emplace_back("m");
  for (int w = 0; w < 2; ++w) {
    Worker worker;
    worker.index = w;
    worker.file = "w" + std::to_string(w);
    const Nanos shift = w * 4;
    worker.jobs = {MakeJob("forward", 0, 0 + shift, 5 + shift, 1), MakeJob("forward", 1, 5 + shift, 9 + shift, 2),
                   MakeJob("forward", 0, 8 + shift, 20 + shift, 3)};
    t.machines[0].workers.push_back(worker);
  }
  FindSteps(t);
  REQUIRE(t.steps.size() == 2);
  CHECK(t.steps[0].start == 0);
  CHECK(t.steps[0].end == 13 * kMs);    // latest end of step 0 on any worker
  CHECK(t.steps[1].start == 13 * kMs);  // clipped from 8 ms
  CHECK(t.steps[1].end == 24 * kMs);
}

TEST_CASE("Heuristic: a step that lies before the previous one (the clock set back) keeps its jobs") {
  constexpr Nanos kTenMinutes = 600'000;  // ms
  Worker worker;
  worker.jobs = {MakeJob("forward", 0, 0, 5, 1), MakeJob("forward", 1, 5, 9, 2),
                 // step 1, logged after the clock was set back ten minutes
                 MakeJob("forward", 0, 10 - kTenMinutes, 15 - kTenMinutes, 3), MakeJob("forward", 1, 15 - kTenMinutes, 19 - kTenMinutes, 4),
                 MakeJob("forward", 0, 20 - kTenMinutes, 25 - kTenMinutes, 5)};
  Timeline t = OneWorker(worker);
  FindSteps(t);
  REQUIRE(t.steps.size() == 3);
  for (const Job& job : t.machines[0].workers[0].jobs) {
    INFO("job at line " << job.line << " in step " << job.step);
    const auto step = std::find_if(t.steps.begin(), t.steps.end(), [&](const StepSpan& s) { return s.step == job.step; });
    REQUIRE(step != t.steps.end());
    CHECK(job.start >= step->start);
    CHECK(job.end <= step->end);
  }
  CHECK(t.steps[1].end - t.steps[1].start == 9 * kMs);
}

TEST_CASE("Heuristic refuses when every job is default") {
  Worker w;
  w.jobs = {MakeJob("default", 0, 0, 1, 1), MakeJob("default", 1, 1, 2, 2)};
  Timeline t = OneWorker(w);
  const StepFinding f = FindSteps(t);
  CHECK(t.steps.empty());
  REQUIRE(f.warnings.size() == 1);
  CHECK(f.warnings[0].find("every job is of type 'default'") != std::string::npos);
  CHECK(t.machines[0].workers[0].jobs[0].step == kNoStep);
}

TEST_CASE("Heuristic refuses when every micro-batch id is 0") {
  Worker w;
  w.jobs = {MakeJob("forward", 0, 0, 1, 1), MakeJob("backward", 0, 1, 2, 2), MakeJob("forward", 0, 3, 4, 3),
            MakeJob("backward", 0, 4, 5, 4)};
  Timeline t = OneWorker(w);
  const StepFinding f = FindSteps(t);
  CHECK(t.steps.empty());
  REQUIRE(f.warnings.size() == 1);
  CHECK(f.warnings[0].find("every micro_batch_id is 0") != std::string::npos);
}

TEST_CASE("--run all: each run's steps are found alone, named from its own window line, and kept apart") {
  Worker w;
  // Run 1 (lines 1-9): window "start at step 2", two steps by job order.
  // Run 2 (lines 10-): window "start at step 2" again, NVTX steps 2 and 3.
  LogRecord window1 = Marker(RecordKind::kProfilerWindow, 1, 0, 2), window2 = Marker(RecordKind::kProfilerWindow, 10, 0, 2);
  w.markers = {window1, window2, Marker(RecordKind::kStepPush, 11, 1000, 2), Marker(RecordKind::kStepPop, 13, 1100),
               Marker(RecordKind::kStepPush, 14, 1200, 3), Marker(RecordKind::kStepPop, 16, 1300)};
  w.jobs = {MakeJob("forward", 0, 0, 10, 2),        MakeJob("forward", 1, 10, 20, 3),
            MakeJob("forward", 0, 100, 110, 4),     MakeJob("forward", 1, 110, 120, 5),
            MakeJob("forward", 0, 1010, 1020, 12),  MakeJob("forward", 0, 1210, 1220, 15)};
  w.run_starts = {0, 10};
  Timeline t = OneWorker(w);
  const StepFinding finding = FindSteps(t);
  CHECK(finding.warnings.empty());
  std::vector<std::string> names;
  for (const StepSpan& step : t.steps) names.push_back(StepName(step.step));
  CHECK(names == std::vector<std::string>{"run1 step2", "run1 step3", "run2 step2", "run2 step3"});
  const Worker& out = t.machines[0].workers[0];
  REQUIRE(out.jobs.size() == 6);
  CHECK(StepName(out.jobs[1].step) == "run1 step2");
  CHECK(StepName(out.jobs[4].step) == "run2 step2");
  CHECK(StepNumber(out.jobs[5].step) == 3);
  CHECK(StepRun(out.jobs[5].step) == 2);
  CHECK(t.step_source == StepSource::kNvtx);
}

TEST_CASE("Follow's cursor numbers its own file's steps; it does not vote on the run's first step") {
  // Three files read from follow's cursors: two at step 7, one (a deleted
  // log that stopped early) still at step 5. A fourth, read from its start,
  // names step 2 in its own window line.
  Timeline t;
  t.machines.emplace_back("m");
  const std::int64_t cursors[] = {7, 7, 5, -1};
  for (int w = 0; w < 4; ++w) {
    Worker worker;
    worker.index = w;
    worker.file = "w" + std::to_string(w);
    LogRecord window = Marker(RecordKind::kProfilerWindow, 1, 0, cursors[w] < 0 ? 2 : cursors[w]);
    window.cursor = cursors[w] >= 0;
    worker.markers = {window};
    worker.jobs = {MakeJob("forward", 0, 100, 110, 2), MakeJob("forward", 1, 110, 120, 3),
                   MakeJob("forward", 0, 200, 210, 4)};
    t.machines[0].workers.push_back(worker);
  }
  const StepFinding finding = FindSteps(t);
  CHECK(finding.warnings.empty());  // the window lines do not disagree: one is the log's own
  const auto first_step = [&](int w) { return t.machines[0].workers[static_cast<size_t>(w)].jobs.front().step; };
  CHECK(first_step(0) == 7);
  CHECK(first_step(1) == 7);
  CHECK(first_step(2) == 5);  // a 2-to-1 vote would have numbered the others from 5, or this one from 7
  CHECK(first_step(3) == 2);
  CHECK(t.machines[0].workers[2].jobs.back().step == 6);
}

TEST_CASE("Step keys: the number alone for one run, run x stride + number for several") {
  CHECK(StepKey(0, 7) == 7);
  CHECK(StepName(7) == "step7");
  CHECK(StepName(StepKey(3, 7)) == "run3 step7");
  CHECK(StepNumber(StepKey(3, 7)) == 7);
  CHECK(StepRun(7) == 0);
  CHECK(StepKey(1, 9) < StepKey(2, 0));
}

TEST_CASE("Workers are gone through on several threads with the same steps, warnings and skipped lines as on one") {
  // 3 machines x 4 workers: NVTX workers with stray pops (skipped lines with
  // examples), workers stepped by job order under disagreeing window lines
  // (a warning), and workers the job-order rule refuses (a warning naming
  // them; the counts of steps then differ, another).
  const auto make = [] {
    Timeline t;
    for (int m = 0; m < 3; ++m) {
      t.machines.emplace_back("machine" + std::to_string(m));
      for (int k = 0; k < 4; ++k) {
        const int n = m * 4 + k;
        Worker w;
        w.machine = m;
        w.index = k;
        w.file = "machine" + std::to_string(m) + "/workerlog." + std::to_string(k);
        if (n % 3 == 0) {
          w.markers = {Marker(RecordKind::kStepPop, 1, 0), Marker(RecordKind::kStepPush, 2, 100, 5),
                       Marker(RecordKind::kStepPop, 3, 200 + n), Marker(RecordKind::kStepPush, 4, 300, 6),
                       Marker(RecordKind::kStepPop, 5, 400)};
          w.jobs = {MakeJob("forward", 0, 110, 120 + n, 10), MakeJob("forward", 0, 310, 320, 11)};
        } else if (n % 3 == 1) {
          w.markers = {Marker(RecordKind::kProfilerWindow, 1, 0, n % 2 ? 2 : 4)};
          w.jobs = {MakeJob("forward", 0, 0, 10, 2), MakeJob("forward", 1, 10, 20 + n, 3),
                    MakeJob("forward", 0, 100, 110, 4), MakeJob("forward", 1, 110, 120, 5)};
        } else {
          w.jobs = {MakeJob("default", 0, 0, 1, 1), MakeJob("default", 1, 1, 2, 2)};
        }
        t.machines[m].workers.push_back(std::move(w));
      }
    }
    return t;
  };
  Timeline one = make(), many = make();
  const StepFinding on_one = FindSteps(one, 1), on_many = FindSteps(many, 4);
  CHECK(on_one.skipped.count(SkipReason::kUnmatchedStepPop) == 4);
  REQUIRE(on_one.warnings.size() == 4);  // window lines disagree, 4 refused, step counts differ, 4 by job order
  CHECK(on_many.warnings == on_one.warnings);
  CHECK(on_many.skipped.total() == on_one.skipped.total());
  REQUIRE(on_many.skipped.examples().size() == on_one.skipped.examples().size());
  for (size_t i = 0; i < on_one.skipped.examples().size(); ++i)
    CHECK(on_many.skipped.examples()[i].file == on_one.skipped.examples()[i].file);
  REQUIRE(many.steps.size() == one.steps.size());
  for (size_t i = 0; i < one.steps.size(); ++i) {
    CHECK(many.steps[i].step == one.steps[i].step);
    CHECK(many.steps[i].start == one.steps[i].start);
    CHECK(many.steps[i].end == one.steps[i].end);
  }
  for (size_t m = 0; m < one.machines.size(); ++m)
    for (size_t w = 0; w < one.machines[m].workers.size(); ++w) {
      const Worker &a = one.machines[m].workers[w], &b = many.machines[m].workers[w];
      REQUIRE(a.jobs.size() == b.jobs.size());
      for (size_t j = 0; j < a.jobs.size(); ++j) CHECK(a.jobs[j].step == b.jobs[j].step);
      CHECK(a.steps.size() == b.steps.size());
    }
}

}  // namespace unit_step_finder_test
