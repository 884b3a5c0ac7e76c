#include "model/step_frontier.h"

#include <catch2/catch.hpp>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_step_frontier_test {

using namespace jobviz;

namespace {

Worker WorkerWithSteps(std::initializer_list<std::int64_t> steps) {
  Worker worker;
  Nanos t = 0;
  for (std::int64_t step : steps) {
    Job job;
    job.start = t;
    job.end = t + 10;
    job.step = step;
    worker.jobs.push_back(job);
    t += 10;
  }
  return worker;
}

Timeline TimelineOf(std::vector<Worker> workers, std::int64_t steps) {
  Timeline timeline;
  timeline.machines.emplace_back("machine0");
  timeline.machines[0].workers = std::move(workers);
  for (std::int64_t s = 0; s < steps; ++s) timeline.steps.push_back({s, s * 100, s * 100 + 90, false});
  return timeline;
}

}  // namespace

TEST_CASE("A step is finished once every worker holds a job of a later one") {
  CHECK(FinishedStepCount(TimelineOf({WorkerWithSteps({0, 0, 1, 1, 2}), WorkerWithSteps({0, 1})}, 3)) == 1);
  CHECK(FinishedStepCount(TimelineOf({WorkerWithSteps({0, 1, 2}), WorkerWithSteps({0, 1, 2})}, 3)) == 2);
  // Everyone in step 0 still: nothing finished, the last step never is until passed.
  CHECK(FinishedStepCount(TimelineOf({WorkerWithSteps({0, 0}), WorkerWithSteps({0})}, 1)) == 0);
}

TEST_CASE("A worker with no job yet holds every step open") {
  CHECK(FinishedStepCount(TimelineOf({WorkerWithSteps({0, 1, 2}), WorkerWithSteps({})}, 3)) == 0);
  CHECK(FinishedStepCount(Timeline{}) == 0);
}

TEST_CASE("A step the run did not finish stops the count") {
  Timeline timeline = TimelineOf({WorkerWithSteps({0, 1, 2, 3}), WorkerWithSteps({0, 1, 2, 3})}, 4);
  timeline.steps[1].unfinished = true;
  CHECK(FinishedStepCount(timeline) == 1);
}

TEST_CASE("A worker whose log was deleted holds no step back") {
  std::vector<Worker> workers = {WorkerWithSteps({0, 1, 2, 3}), WorkerWithSteps({0})};
  workers[1].file = "machine0/workerlog.1";
  const Timeline timeline = TimelineOf(std::move(workers), 4);
  CHECK(FinishedStepCount(timeline) == 0);
  CHECK(FinishedStepCount(timeline, {"machine0/workerlog.1"}) == 3);
}

}  // namespace unit_step_frontier_test
