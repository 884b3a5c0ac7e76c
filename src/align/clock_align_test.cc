#include "align/clock_align.h"

#include "align/pipeline_order.h"
#include "analyse/run_simulator.h"

#include <catch2/catch.hpp>

using namespace jobviz;

namespace {

constexpr Nanos kUs = 1000, kMs = 1'000'000;

std::vector<SyncReading> Readings(std::vector<std::pair<std::int64_t, Nanos>> points) {
  std::vector<SyncReading> out;
  for (auto [round, time] : points) out.push_back({round, time});
  return out;
}

LogRecord Sync(std::int64_t round, Nanos time) {
  LogRecord r;
  r.kind = RecordKind::kClockSync;
  r.round = round;
  r.start = time;
  return r;
}

// Two machines, one worker each, a 2-stage pipeline: machine1's forward of
// each micro-batch starts `transfer` after machine0's ends (true time), and
// machine1's clock reads `skew` ahead.
Timeline TwoStagePipeline(Nanos skew, Nanos transfer) {
  Timeline t;
  for (int m = 0; m < 2; ++m) {
    t.machines.emplace_back("machine" + std::to_string(m));
    Worker w;
    w.machine = m;
    w.file = "machine" + std::to_string(m) + "/workerlog.0";
    t.machines[m].workers.push_back(w);
  }
  auto& stage0 = t.machines[0].workers[0].jobs;
  auto& stage1 = t.machines[1].workers[0].jobs;
  for (int mb = 0; mb < 4; ++mb) {
    const Nanos f0 = 10 * kMs + mb * 10 * kMs;  // forward on stage 0
    stage0.push_back({"", "forward", mb, f0, f0 + 2 * kMs, 1, kNoStep});
    const Nanos f1 = f0 + 2 * kMs + transfer;   // forward on stage 1
    stage1.push_back({"", "forward", mb, f1 + skew, f1 + 2 * kMs + skew, 1, kNoStep});
    const Nanos b1 = f1 + 2 * kMs;              // backward on stage 1
    stage1.push_back({"", "backward", mb, b1 + skew, b1 + 3 * kMs + skew, 1, kNoStep});
    const Nanos b0 = b1 + 3 * kMs + transfer;   // backward on stage 0
    stage0.push_back({"", "backward", mb, b0, b0 + 3 * kMs, 1, kNoStep});
  }
  for (auto* jobs : {&stage0, &stage1})
    std::sort(jobs->begin(), jobs->end(), [](const Job& a, const Job& b) { return a.start < b.start; });
  return t;
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

TEST_CASE("AlignClocks: sync lines rewrite every timestamp onto the reference clock") {
  Timeline t = TwoStagePipeline(5 * kMs, 100 * kUs);
  for (int k = 0; k < 3; ++k) {
    t.machines[0].workers[0].markers.push_back(Sync(k, 1 * kMs + k * kUs));
    t.machines[1].workers[0].markers.push_back(Sync(k, 6 * kMs + k * kUs));
  }
  const Nanos first_forward_stage1 = t.machines[1].workers[0].jobs[0].start;
  const ClockAlignment a = AlignClocks(t, {});
  CHECK(a.violations_before == 4);  // +5 ms: every backward hand-off looks early
  CHECK(a.violations_after == 0);
  CHECK(a.clocks[1].method == ClockMethod::kSync);
  CHECK(t.machines[1].workers[0].jobs[0].start == first_forward_stage1 - 5 * kMs);
  CHECK(t.machines[1].workers[0].markers[0].start == 1 * kMs);
  CHECK(t.machines[1].clock_method == "sync");
  CHECK(t.machines[1].clock_offset == 5 * kMs);
  CHECK(a.warnings.empty());
}

TEST_CASE("AlignClocks: a machine without sync lines falls back to causal with a warning") {
  Timeline t = TwoStagePipeline(-2 * kMs, 100 * kUs);
  t.machines[0].workers[0].markers.push_back(Sync(0, 1 * kMs));
  const ClockAlignment a = AlignClocks(t, {});
  CHECK(a.clocks[1].method == ClockMethod::kCausal);
  REQUIRE(a.warnings.size() == 1);
  CHECK(a.warnings[0].find("machine1 has no clock sync rounds in common with machine0") != std::string::npos);
  CHECK(a.violations_before == 4);
  CHECK(a.violations_after == 0);
}

TEST_CASE("AlignClocks: auto without sync lines changes nothing but warns about violations") {
  Timeline t = TwoStagePipeline(-2 * kMs, 100 * kUs);
  const ClockAlignment a = AlignClocks(t, {});
  CHECK(a.clocks[1].method == ClockMethod::kNone);
  CHECK(a.violations_after == 4);
  REQUIRE(a.warnings.size() == 1);
  CHECK(a.warnings[0].find("--clock_align causal") != std::string::npos);
}

TEST_CASE("AlignClocks: manual offsets win, and a worker off its machine's clock is flagged") {
  Timeline t = TwoStagePipeline(-2 * kMs, 100 * kUs);
  Worker second = t.machines[1].workers[0];
  second.index = 1;
  second.file = "machine1/workerlog.1";
  second.jobs.clear();
  t.machines[1].workers.push_back(second);
  for (int k = 0; k < 3; ++k) {
    t.machines[0].workers[0].markers.push_back(Sync(k, 1 * kMs));
    t.machines[1].workers[0].markers.push_back(Sync(k, 1 * kMs));
    t.machines[1].workers[1].markers.push_back(Sync(k, 1 * kMs));
  }
  t.machines[1].workers.push_back(second);
  t.machines[1].workers[2].file = "machine1/workerlog.2";
  t.machines[1].workers[2].markers = {Sync(0, 9 * kMs), Sync(1, 9 * kMs), Sync(2, 9 * kMs)};
  AlignOptions options;
  options.manual_offsets[1] = -2 * kMs;
  const ClockAlignment a = AlignClocks(t, options);
  CHECK(a.clocks[1].method == ClockMethod::kManual);
  CHECK(a.violations_after == 0);
  bool flagged = false;
  for (const std::string& w : a.warnings) flagged |= w.find("machine1/workerlog.2: clock sync readings") == 0;
  CHECK(flagged);
}

namespace {

// dp2 x pp2 x mp2 as data parallelism is usually laid out: one (replica,
// stage) per machine, so no hand-off joins the two replicas' machines. The
// clocks read machine1 +2.5 ms, machine2 +0.8 ms, machine3 -1.7 ms ahead.
Timeline ReplicasOnOwnMachines(bool optimizers, Timeline* truth) {
  sim::SimRun run;
  run.pp = run.mp = run.dp = 2;
  run.jitter = 0.02;
  const Timeline simulated = sim::Simulate(run);
  Timeline t;
  t.topology = simulated.topology;
  for (int m = 0; m < 4; ++m) t.machines.emplace_back("machine" + std::to_string(m));
  for (const Machine& machine : simulated.machines)
    for (const Worker& worker : machine.workers) {
      const int rank = worker.role.rank, m = rank / 2;
      Worker w = worker;
      w.machine = m;
      w.index = rank % 2;
      if (!optimizers) std::erase_if(w.jobs, [](const Job& job) { return job.type == "optimizer"; });
      for (Job& job : w.jobs) job.step = kNoStep;  // as a run is aligned: its steps are found afterwards
      t.machines[m].workers.push_back(std::move(w));
    }
  *truth = t;
  const Nanos skew[] = {0, 2500 * kUs, 800 * kUs, -1700 * kUs};
  for (int m = 0; m < 4; ++m)
    for (Worker& w : t.machines[m].workers)
      for (Job& job : w.jobs) {
        job.start += skew[m];
        job.end += skew[m];
      }
  return t;
}

Nanos WorstError(const Timeline& aligned, const Timeline& truth) {
  Nanos worst = 0;
  for (size_t m = 0; m < aligned.machines.size(); ++m)
    for (size_t w = 0; w < aligned.machines[m].workers.size(); ++w)
      for (size_t j = 0; j < aligned.machines[m].workers[w].jobs.size(); ++j)
        worst = std::max(worst, std::abs(aligned.machines[m].workers[w].jobs[j].start - truth.machines[m].workers[w].jobs[j].start));
  return worst;
}

}  // namespace

TEST_CASE("Replicas on machines of their own: each pipeline aligned, the replicas tied through the all-reduce, and said so") {
  Timeline truth;
  Timeline t = ReplicasOnOwnMachines(true, &truth);
  AlignOptions options;
  options.mode = AlignMode::kCausal;
  const ClockAlignment result = AlignClocks(t, options);
  INFO("worst job off by " << WorstError(t, truth) << " ns");
  CHECK(WorstError(t, truth) < 100 * kUs);  // was 1.7 ms: the second replica never aligned
  CHECK(result.violations_after == 0);
  CHECK(result.clocks[2].method == ClockMethod::kReduce);
  CHECK(result.clocks[3].method == ClockMethod::kReduce);
  bool said = false;
  for (const std::string& w : result.warnings) said |= w.find("machine2, machine3: no hand-off ties them") == 0 && w.find("within +-") != std::string::npos;
  CHECK(said);
}

TEST_CASE("Replicas that nothing ties to the reference are said to be, not silently left as logged") {
  Timeline truth;
  Timeline t = ReplicasOnOwnMachines(false, &truth);  // no optimizer: no all-reduce to tie them
  AlignOptions options;
  options.mode = AlignMode::kCausal;
  const ClockAlignment result = AlignClocks(t, options);
  bool said = false;
  for (const std::string& w : result.warnings) said |= w.find("machine2, machine3: no hand-off or gradient all-reduce ties them") == 0;
  CHECK(said);
  // Within the second replica, its two machines are still aligned with each other.
  const Nanos m2 = t.machines[2].workers[0].jobs[0].start - truth.machines[2].workers[0].jobs[0].start;
  const Nanos m3 = t.machines[3].workers[0].jobs[0].start - truth.machines[3].workers[0].jobs[0].start;
  CHECK(std::abs(m2 - m3) < 100 * kUs);
}
