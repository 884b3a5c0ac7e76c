#include "align/clock_estimates.h"

#include <catch2/catch.hpp>

#include "align/clock_test_util.h"
#include "align/pipeline_order.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_clock_estimates_test {

using namespace jobviz;
using namespace jobviz::clock_test;

namespace {

std::vector<SyncReading> Readings(std::vector<std::pair<std::int64_t, Nanos>> points) {
  std::vector<SyncReading> out;
  for (auto [round, time] : points) out.push_back({round, time});
  return out;
}

}  // namespace

TEST_CASE("Sync: a constant offset, robust to an outlier round") {
  const auto ref = Readings({{0, 100 * kMs}, {1, 101 * kMs}, {2, 102 * kMs}, {3, 103 * kMs}, {4, 104 * kMs}});
  auto machine = Readings({{0, 103 * kMs + 2 * kUs}, {1, 104 * kMs - 1 * kUs}, {2, 105 * kMs + 900 * kUs},
                           {3, 106 * kMs}, {4, 107 * kMs + 1 * kUs}});
  const auto clock = EstimateSyncClock(machine, ref);
  REQUIRE(clock);
  CHECK(clock->method == ClockMethod::kSync);
  CHECK(std::abs(clock->offset - 3 * kMs) <= 2 * kUs);  // the 900 us outlier does not move it
  CHECK(clock->drift_ppm == 0);
}

TEST_CASE("Sync: rounds at the start and the end give the drift") {
  // 50 ppm: over 10 s the machine gains 500 us.
  std::vector<std::pair<std::int64_t, Nanos>> ref, machine;
  for (int k = 0; k < 5; ++k) {
    ref.push_back({k, 1'000 * kMs + k * 100 * kUs});
    machine.push_back({k, 1'000 * kMs + k * 100 * kUs + 2 * kMs});
    ref.push_back({5 + k, 11'000 * kMs + k * 100 * kUs});
    machine.push_back({5 + k, 11'000 * kMs + k * 100 * kUs + 2 * kMs + 500 * kUs});
  }
  const auto clock = EstimateSyncClock(Readings(machine), Readings(ref));
  REQUIRE(clock);
  CHECK(clock->drift_ppm == Approx(50.0).epsilon(0.01));
  CHECK(std::abs(clock->OffsetAt(1'000 * kMs) - 2 * kMs) < kUs);
  CHECK(std::abs(clock->OffsetAt(11'000 * kMs) - 2'500 * kUs) < kUs);
}

TEST_CASE("Sync: jitter over a short window is not taken for drift") {
  std::vector<std::pair<std::int64_t, Nanos>> ref, machine;
  const Nanos jitter[] = {40 * kUs, -30 * kUs, 10 * kUs, -50 * kUs, 20 * kUs};
  for (int k = 0; k < 5; ++k) {
    ref.push_back({k, 1'000 * kMs + k * 100 * kUs});
    machine.push_back({k, 1'000 * kMs + k * 100 * kUs + 2 * kMs + jitter[k]});
    ref.push_back({5 + k, 1'100 * kMs + k * 100 * kUs});
    machine.push_back({5 + k, 1'100 * kMs + k * 100 * kUs + 2 * kMs - jitter[k] / 2 + 15 * kUs});
  }
  const auto clock = EstimateSyncClock(Readings(machine), Readings(ref));
  REQUIRE(clock);
  CHECK(clock->drift_ppm == 0);
  CHECK(std::abs(clock->offset - 2 * kMs) <= 25 * kUs);
}

TEST_CASE("Sync: no rounds in common, no estimate") {
  CHECK_FALSE(EstimateSyncClock(Readings({{0, 1}}), Readings({{1, 1}})));
  CHECK_FALSE(EstimateSyncClock({}, Readings({{1, 1}})));
}

TEST_CASE("Order violations are counted between machines only") {
  const Timeline t = TwoStagePipeline(-1 * kMs, 100 * kUs);  // machine1 reads 1 ms behind
  std::vector<MachineClock> raw(2);
  CHECK(CountOrderViolations(t, raw) == 4);  // every forward hand-off looks early
  std::vector<MachineClock> fixed(2);
  fixed[1].offset = -1 * kMs;
  CHECK(CountOrderViolations(t, fixed) == 0);
}

TEST_CASE("Causal: recovers the offset within one transfer time and removes every violation") {
  for (Nanos skew : {-3 * kMs, 2500 * kUs}) {
    Timeline t = TwoStagePipeline(skew, 100 * kUs);
    const auto clocks = EstimateCausalClocks(t, 0);
    CHECK(clocks[0].method == ClockMethod::kReference);
    CHECK(clocks[1].method == ClockMethod::kCausal);
    CHECK(std::abs(clocks[1].offset - skew) <= 100 * kUs);
    CHECK(CountOrderViolations(t, clocks) == 0);
  }
}

TEST_CASE("Causal: a stage order other than rank order (machine1 runs the first stage)") {
  Timeline t = TwoStagePipeline(3 * kMs, 100 * kUs);
  std::swap(t.machines[0].workers[0].jobs, t.machines[1].workers[0].jobs);  // now machine1 feeds machine0
  // machine0 (stage 1) reads 3 ms ahead of machine1 (stage 0): take machine1 as the reference.
  t.stage_order = {{1, 0}, {0, 0}};
  const auto clocks = EstimateCausalClocks(t, 1);
  CHECK(std::abs(clocks[0].offset - 3 * kMs) <= 100 * kUs);
  CHECK(CountOrderViolations(t, clocks) == 0);
  std::string error;
  std::vector<std::pair<int, int>> order;
  CHECK(ResolveStageOrder({{"machine1", 0, "machine1:0"}, {"machine0", 0, "machine0:0"}}, t, &order, &error));
  CHECK(order == std::vector<std::pair<int, int>>{{1, 0}, {0, 0}});
  order.clear();
  CHECK_FALSE(ResolveStageOrder({{"machine1", 0, "machine1:0"}}, t, &order, &error));
  CHECK(error.find("name each once") != std::string::npos);
  order.clear();
  CHECK_FALSE(ResolveStageOrder({{"machine1", 0, "machine1:0"}, {"machine9", 0, "machine9:0"}}, t, &order, &error));
  CHECK(error.find("'machine9:0' is not MACHINE:WORKER of a log read") != std::string::npos);
}

TEST_CASE("Causal: no shift when the raw clocks keep pipeline order") {
  const Timeline t = TwoStagePipeline(20 * kUs, 100 * kUs);  // skew below the transfer time
  CHECK(EstimateCausalClocks(t, 0)[1].offset == 0);
}

}  // namespace unit_clock_estimates_test
