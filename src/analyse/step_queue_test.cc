#include "analyse/step_queue.h"

#include <catch2/catch.hpp>
#include <atomic>
#include <mutex>

#include "analyse/run_simulator.h"
#include "model/step_window.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_step_queue_test {

using namespace jobviz;
using namespace jobviz::sim;

namespace {

std::vector<Timeline> OneSteps(const Timeline& timeline, size_t first, size_t last) {
  std::vector<Timeline> ones;
  for (StepSlice& slice : SliceSteps(timeline, first, last)) ones.push_back(std::move(slice.one));
  return ones;
}

}  // namespace

TEST_CASE("Steps added in several batches come back in order, each with the figures of its own analysis") {
  SimRun run;
  run.steps = 6;
  run.stage_factor[1] = 1.4;
  const Timeline t = WithSteps(Simulate(run));
  REQUIRE(t.steps.size() == 6);
  const std::vector<StepReport> direct = AnalyseSteps(t, 0, 6, 1);
  std::mutex mutex;
  std::vector<StepReport> emitted;
  {
    StepQueue queue(2, [&](const StepReport& r) {
      std::lock_guard lock(mutex);
      emitted.push_back(r);
    });
    queue.Add(OneSteps(t, 0, 1));
    queue.Add(OneSteps(t, 1, 4));
    queue.Add({});
    queue.Add(OneSteps(t, 4, 6));
    queue.Drain();
    std::lock_guard lock(mutex);
    REQUIRE(emitted.size() == 6);  // Drain returned: every step is out
  }
  for (size_t i = 0; i < emitted.size(); ++i) {
    CHECK(emitted[i].span.step == t.steps[i].step);
    CHECK(emitted[i].jobs == direct[i].jobs);
    CHECK(emitted[i].bubble_ratio == direct[i].bubble_ratio);
    CHECK(emitted[i].cause_label == direct[i].cause_label);
  }
}

TEST_CASE("A queue destroyed with steps waiting emits them first") {
  SimRun run;
  run.steps = 3;
  const Timeline t = WithSteps(Simulate(run));
  std::atomic<size_t> emitted = 0;
  {
    StepQueue queue(1, [&](const StepReport&) { ++emitted; });
    queue.Add(OneSteps(t, 0, 3));
  }
  CHECK(emitted == 3);
}

TEST_CASE("An Add beyond the jobs the queue holds waits until the queue has room") {
  SimRun run;
  run.steps = 1;
  const Timeline t = WithSteps(Simulate(run));
  const size_t step_jobs = CountJobs(t);
  REQUIRE(step_jobs > 0);
  constexpr size_t kRoomFor = 4;  // steps
  std::mutex gate;  // held: the queue's thread stops in its first emit
  std::unique_lock hold(gate);
  std::atomic<bool> in_emit = false;
  std::atomic<size_t> emitted = 0;
  StepQueue queue(
      1,
      [&](const StepReport&) {
        in_emit = true;
        std::lock_guard pass(gate);
        ++emitted;
      },
      kRoomFor * step_jobs);
  queue.Add(OneSteps(t, 0, 1));
  while (!in_emit) std::this_thread::yield();  // the thread holds that step; the queue is empty
  std::atomic<size_t> added = 0;
  std::thread adder([&] {
    for (size_t i = 0; i < kRoomFor + 1; ++i) {
      queue.Add(OneSteps(t, 0, 1));
      ++added;
    }
  });
  // The adder fills the queue, then waits in its last Add.
  while (added < kRoomFor) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(added == kRoomFor);
  hold.unlock();
  adder.join();
  queue.Drain();
  CHECK(added == kRoomFor + 1);
  CHECK(emitted == kRoomFor + 2);
}

}  // namespace unit_step_queue_test
