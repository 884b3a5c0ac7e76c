#include "analyse/step_jobs.h"

#include <catch2/catch.hpp>
#include <numeric>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_step_jobs_test {

using namespace jobviz;

namespace {

Worker WithSteps(const std::vector<std::int64_t>& steps) {
  Worker worker;
  Nanos start = 1000;
  for (std::int64_t step : steps) {
    Job job;
    job.type = "forward";
    job.start = start;
    job.end = start + 10;
    job.step = step;
    worker.jobs.push_back(job);
    start += 100;
  }
  return worker;
}

std::vector<std::uint32_t> Indices(std::span<const std::uint32_t> jobs) { return {jobs.begin(), jobs.end()}; }

const std::vector<StepWindow> kWindows = {{1, 0, 0}, {2, 0, 0}, {3, 0, 0}};

}  // namespace

TEST_CASE("Windows of consecutive jobs are ranges; the indices are not stored") {
  const Worker worker = WithSteps({1, 1, 2, 2, 2, kNoStep, 7});  // no job of step 3; step 7 has no window
  std::vector<std::uint32_t> counting(worker.jobs.size());
  std::iota(counting.begin(), counting.end(), 0u);
  const StepJobs jobs = GroupByWindow(worker, kWindows, /*by_step=*/true);
  CHECK(jobs.consecutive);
  CHECK(jobs.order.empty());
  CHECK(Indices(jobs.Of(0, counting)) == std::vector<std::uint32_t>{0, 1});
  CHECK(Indices(jobs.Of(1, counting)) == std::vector<std::uint32_t>{2, 3, 4});
  CHECK(jobs.Of(2, counting).empty());
  CHECK(jobs.Of(5, counting).empty());
}

TEST_CASE("Windows whose jobs interleave keep each window's indices in start order") {
  // A step's last job starting after the next step's first (a late optimizer).
  const Worker worker = WithSteps({1, 1, 2, 1, 2, 3});
  const std::vector<std::uint32_t> counting = {0, 1, 2, 3, 4, 5};
  const StepJobs jobs = GroupByWindow(worker, kWindows, /*by_step=*/true);
  CHECK_FALSE(jobs.consecutive);
  CHECK(Indices(jobs.Of(0, counting)) == std::vector<std::uint32_t>{0, 1, 3});
  CHECK(Indices(jobs.Of(1, counting)) == std::vector<std::uint32_t>{2, 4});
  CHECK(Indices(jobs.Of(2, counting)) == std::vector<std::uint32_t>{5});
}

TEST_CASE("Without steps every job is in window 0") {
  const Worker worker = WithSteps({kNoStep, kNoStep, kNoStep});
  const std::vector<std::uint32_t> counting = {0, 1, 2};
  const StepJobs jobs = GroupByWindow(worker, {{kNoStep, 0, 0}}, /*by_step=*/false);
  CHECK(Indices(jobs.Of(0, counting)) == std::vector<std::uint32_t>{0, 1, 2});
}

}  // namespace unit_step_jobs_test
