#include "model/step_counts.h"

#include <catch2/catch.hpp>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_step_counts_test {

using namespace jobviz;

namespace {

Job At(const char* type, std::int64_t micro_batch, std::int64_t step, Nanos start) {
  return Job{"0", type, micro_batch, start, start + 5, static_cast<std::uint64_t>(start), step};
}

}  // namespace

TEST_CASE("A step's count of a type is its distinct micro-batches; steps come in order") {
  Worker w;
  // Step 1 before step 0 in time (the clock set back between them), a line printed twice, a job of no step.
  w.jobs = {At("forward", 0, 1, 10), At("forward", 1, 1, 20), At("backward", 0, 1, 30), At("backward", 0, 1, 31),
            At("forward", 0, 0, 40), At("optimizer", 0, 0, 50), At("forward", 5, kNoStep, 60)};
  const std::vector<StepCounts> steps = CountByStep(w);
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].step == 0);
  CHECK(steps[0].jobs == 2);
  CHECK(steps[0].Count(Name("forward").index()) == 1);
  CHECK(steps[0].Count(Name("optimizer").index()) == 1);
  CHECK(steps[1].step == 1);
  CHECK(steps[1].jobs == 3);  // backward 0 printed twice is one job
  CHECK(steps[1].Count(Name("forward").index()) == 2);
  CHECK(steps[1].Count(Name("backward").index()) == 1);
  CHECK(steps[1].Count(Name("backward_w0").index()) == 0);
  for (const TypeCount& t : steps[1].types) {
    INFO("type index " << t.type);
    CHECK(t.pass == (t.type != Name("optimizer").index()));
    CHECK(t.backward == (t.type == Name("backward").index()));
  }
}

TEST_CASE("Micro-batches run forward and not by each backward type of the step are missing backwards") {
  Worker w;
  // forward0: micro-batches 0-2; backward_b0 ran 0 and 1, backward_w0 only 0; forward1 has no backward at all.
  w.jobs = {At("forward0", 0, 3, 1), At("forward0", 1, 3, 2), At("forward0", 2, 3, 3), At("forward1", 0, 3, 4),
            At("backward_b0", 0, 3, 5), At("backward_b0", 1, 3, 6), At("backward_w0", 0, 3, 7)};
  const std::vector<StepCounts> steps = CountByStep(w);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].missing_backwards == 1 + 2);  // backward_b0 short of forward0 by one, backward_w0 by two
  w.jobs.push_back(At("backward_b0", 2, 3, 8));
  w.jobs.push_back(At("backward_w0", 1, 3, 9));
  w.jobs.push_back(At("backward_w0", 2, 3, 10));
  CHECK(CountByStep(w)[0].missing_backwards == 0);
}

}  // namespace unit_step_counts_test
