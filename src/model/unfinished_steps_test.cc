#include "model/unfinished_steps.h"

#include <catch2/catch.hpp>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_unfinished_steps_test {

using namespace jobviz;

namespace {

constexpr Nanos kMs = 1'000'000;

// Two workers of a pipeline, `steps` steps of 2 forwards, 2 backwards and an optimizer.
Timeline TwoWorkers(int steps) {
  Timeline t;
  t.machines.emplace_back("m");
  for (int w = 0; w < 2; ++w) {
    Worker worker;
    worker.index = w;
    std::uint64_t line = 1;
    for (int s = 0; s < steps; ++s) {
      Nanos at = s * 100 * kMs + w * kMs;
      for (const char* type : {"forward", "forward", "backward", "backward", "optimizer"}) {
        const std::int64_t mb = (line - 1) % 5 % 2;
        worker.jobs.push_back(Job{"0", type, std::string(type) == "optimizer" ? 0 : mb, at, at + 5 * kMs, line++, s});
        at += 6 * kMs;
      }
    }
    t.machines[0].workers.push_back(std::move(worker));
  }
  for (int s = 0; s < steps; ++s) t.steps.push_back({s, s * 100 * kMs, s * 100 * kMs + 40 * kMs});
  return t;
}

}  // namespace

TEST_CASE("Every worker finished every step: no step is unfinished") {
  Timeline t = TwoWorkers(3);
  const UnfinishedSteps u = MarkUnfinishedSteps(&t);
  CHECK(u.first == kNoStep);
  CHECK(u.steps == 0);
  for (const StepSpan& s : t.steps) CHECK_FALSE(s.unfinished);
  CHECK(u.workers[0].step == kNoStep);
}

TEST_CASE("Each worker's last job end comes with the counts, with steps or without") {
  Timeline t = TwoWorkers(3);
  t.machines[0].workers[1].jobs[4].end += 500 * kMs;  // a job that ends after every later one
  for (const bool steps : {true, false}) {
    if (!steps) t.steps.clear();
    const UnfinishedSteps u = MarkUnfinishedSteps(&t, 2);
    REQUIRE(u.last_job_ends.size() == 2);
    for (size_t w = 0; w < 2; ++w) CHECK(u.last_job_ends[w] == LastJobEnd(t.machines[0].workers[w]));
  }
  CHECK(LastJobEnd(t.machines[0].workers[1]) == t.machines[0].workers[1].jobs[4].end);
}

TEST_CASE("One worker's log ends inside the last step: that step is unfinished") {
  Timeline t = TwoWorkers(3);
  auto& jobs = t.machines[0].workers[1].jobs;
  jobs.resize(jobs.size() - 3);  // its last backward pair and optimizer never came
  const UnfinishedSteps u = MarkUnfinishedSteps(&t);
  CHECK(u.first == 2);
  CHECK(u.steps == 1);
  CHECK(u.jobs == 5 + 2);
  CHECK(t.steps[2].unfinished);
  CHECK_FALSE(t.steps[1].unfinished);
  CHECK(u.workers[1].step == 2);
  CHECK(u.workers[1].jobs == 2);
  CHECK(u.workers[1].expected == 5);
  CHECK(u.workers[0].step == kNoStep);
}

TEST_CASE("A worker that never reached the step the others ran stopped before it") {
  Timeline t = TwoWorkers(3);
  auto& jobs = t.machines[0].workers[0].jobs;
  jobs.resize(jobs.size() - 5);
  const UnfinishedSteps u = MarkUnfinishedSteps(&t);
  CHECK(u.first == 2);
  CHECK(u.workers[0].step == 2);
  CHECK(u.workers[0].jobs == 0);
}

TEST_CASE("Micro-batches numbered far from 0 and lines printed twice are counted as the usual ones are") {
  // A step's count of a type is its distinct micro-batches, whatever their numbers.
  for (const std::int64_t offset : {std::int64_t{0}, std::int64_t{1} << 40, std::int64_t{-7}}) {
    INFO("micro-batches from " << offset);
    Timeline t = TwoWorkers(3);
    for (Worker& w : t.machines[0].workers)
      for (Job& job : w.jobs) job.micro_batch += offset;
    auto& jobs = t.machines[0].workers[1].jobs;
    jobs.resize(jobs.size() - 3);      // its last backward pair and optimizer never came
    jobs.insert(jobs.end() - 1, jobs[jobs.size() - 2]);  // a forward line printed twice: one job run once
    const UnfinishedSteps u = MarkUnfinishedSteps(&t);
    CHECK(u.first == 2);
    CHECK(u.steps == 1);
    CHECK(u.workers[1].step == 2);
    CHECK(u.workers[1].expected == 5);
    CHECK(u.workers[0].step == kNoStep);
    Timeline whole = TwoWorkers(3);  // every step finished, one line printed twice: nobody is short
    for (Worker& w : whole.machines[0].workers)
      for (Job& job : w.jobs) job.micro_batch += offset;
    auto& again = whole.machines[0].workers[1].jobs;
    again.insert(again.end() - 4, again[again.size() - 5]);
    CHECK(MarkUnfinishedSteps(&whole).first == kNoStep);
  }
}

TEST_CASE("Every log ends mid-step: the last step is unfinished, even with one step only for a worker's own count") {
  Timeline t = TwoWorkers(2);
  for (Worker& w : t.machines[0].workers) w.jobs.resize(w.jobs.size() - 2);
  const UnfinishedSteps u = MarkUnfinishedSteps(&t);
  CHECK(u.first == 1);
  CHECK(t.steps[1].unfinished);
}

TEST_CASE("A line printed twice is no stop, nor is a worker whose passes match the others'") {
  Timeline t = TwoWorkers(2);
  auto& jobs = t.machines[0].workers[0].jobs;
  jobs.insert(jobs.begin() + 1, jobs[0]);  // forward 0 of step 0, twice
  const UnfinishedSteps u = MarkUnfinishedSteps(&t);
  CHECK(u.first == kNoStep);
}

TEST_CASE("The set of unfinished steps answers for job steps") {
  Timeline t = TwoWorkers(3);
  t.steps[2].unfinished = true;
  const UnfinishedStepSet set(t);
  CHECK(set.Contains(2));
  CHECK_FALSE(set.Contains(1));
  CHECK_FALSE(set.Contains(kNoStep));
}

TEST_CASE("A watchdog line of a job that never ended stops its worker short, unless that job ended") {
  Timeline t = TwoWorkers(2);
  Worker& w = t.machines[0].workers[1];
  // Its step whole by count, then a forward of the next step that began and never ended.
  w.in_flight.push_back({"9", "forward", 0, w.jobs.back().end + kMs, w.jobs.back().end + 61'000 * kMs, 99, true});
  SECTION("a job of the step it was in: the step is unfinished") {
    // One step, no optimizer line on either worker (both blocked in the
    // all-reduce): the counts look whole; the line alone says otherwise.
    t = TwoWorkers(1);
    for (Worker& each : t.machines[0].workers) each.jobs.pop_back();
    Worker& stuck = t.machines[0].workers[1];
    stuck.in_flight.push_back({"9", "optimizer", 0, stuck.jobs.back().end, stuck.jobs.back().end + 60'000 * kMs, 99, true});
    const UnfinishedSteps u = MarkUnfinishedSteps(&t);
    CHECK(u.workers[1].step == 0);
    CHECK(u.workers[0].step == kNoStep);
    CHECK(t.steps[0].unfinished);
  }
  SECTION("a job of the step that had already run in it (a later step's): not this step") {
    const UnfinishedSteps u = MarkUnfinishedSteps(&t);
    CHECK(u.workers[1].step == kNoStep);
  }
  SECTION("a line written while the last job still ran, which then ended: no stop") {
    w.in_flight.back() = {"9", "backward", 1, w.jobs.back().start, w.jobs.back().start + kMs, 98, true};
    const UnfinishedSteps u = MarkUnfinishedSteps(&t);
    CHECK(u.first == kNoStep);
  }
}

TEST_CASE("A lone step with no optimizer anywhere: a few logs silent well before the rest stopped it") {
  Timeline t = TwoWorkers(1);
  t.machines[0].workers.push_back(t.machines[0].workers[1]);
  t.machines[0].workers.push_back(t.machines[0].workers[1]);
  for (Worker& w : t.machines[0].workers) {
    w.jobs.pop_back();  // every optimizer blocked in the all-reduce: no line
    w.end.stamped = w.jobs.back().end + 80 * kMs;  // the logs went on to the kill
  }
  SECTION("one log ended well before the others: its worker stopped the step") {
    Worker& silent = t.machines[0].workers[2];
    silent.end.stamped = silent.jobs.back().end + kMs;
    const UnfinishedSteps u = MarkUnfinishedSteps(&t);
    CHECK(u.first == 0);
    CHECK(t.steps[0].unfinished);
    CHECK(u.workers[2].step == 0);
    CHECK(u.workers[0].step == kNoStep);
  }
  SECTION("logs ending together: a run that simply has no optimizer lines finished") {
    const UnfinishedSteps u = MarkUnfinishedSteps(&t);
    CHECK(u.first == kNoStep);
  }
  SECTION("most logs ended early, one went on (a rank saving a checkpoint): no stop") {
    t.machines[0].workers[3].end.stamped += 500 * kMs;
    for (size_t w = 0; w < 3; ++w) t.machines[0].workers[w].end.stamped -= 70 * kMs;
    const UnfinishedSteps u = MarkUnfinishedSteps(&t);
    CHECK(u.first == kNoStep);
  }
}

TEST_CASE("A step every worker left alike, a backward short and no optimizer anywhere, is unfinished") {
  Timeline t = TwoWorkers(1);
  for (Worker& w : t.machines[0].workers) w.jobs.resize(3);  // forward 0, forward 1, backward 0
  const UnfinishedSteps u = MarkUnfinishedSteps(&t);
  CHECK(u.first == 0);
  CHECK(t.steps[0].unfinished);
  CHECK(u.workers[0].step == 0);
  CHECK(u.workers[1].step == 0);
}

TEST_CASE("A middle stage without the optimizer every other stage ran stopped there, its peers listed apart") {
  // One step, four stages of two tensor-parallel peers, listed peer by peer
  // (stage 0 1 2 3 0 1 2 3): each stage is counted once however often and
  // wherever it comes. Stage 1's two workers never ran the optimizer.
  Timeline t;
  t.machines.emplace_back("m");
  for (int w = 0; w < 8; ++w) {
    Worker worker;
    worker.index = w;
    worker.role = {w, w % 4, w / 4, 0};
    Nanos at = w * kMs;
    std::uint64_t line = 1;
    for (const char* type : {"forward", "forward", "backward", "backward", "optimizer"}) {
      if (w % 4 == 1 && std::string(type) == "optimizer") break;
      const std::int64_t mb = line <= 4 ? static_cast<std::int64_t>((line - 1) % 2) : 0;
      worker.jobs.push_back(Job{"0", type, mb, at, at + 5 * kMs, line, 0});
      ++line;
      at += 6 * kMs;
    }
    t.machines[0].workers.push_back(std::move(worker));
  }
  t.steps.push_back({0, 0, 40 * kMs});
  const UnfinishedSteps u = MarkUnfinishedSteps(&t, 2);
  CHECK(u.first == 0);
  for (int w = 0; w < 8; ++w) {
    INFO("worker " << w);
    if (w % 4 == 1) {
      CHECK(u.workers[static_cast<size_t>(w)].step == 0);
      CHECK(u.workers[static_cast<size_t>(w)].jobs == 4);
      CHECK(u.workers[static_cast<size_t>(w)].expected == 5);
    } else {
      CHECK(u.workers[static_cast<size_t>(w)].step == kNoStep);
    }
  }
}

}  // namespace unit_unfinished_steps_test
