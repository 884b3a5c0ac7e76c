#include "align/clock_align.h"

#include "align/clock_test_util.h"

#include "align/pipeline_order.h"
#include "analyse/run_simulator.h"

#include <catch2/catch.hpp>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_clock_align_test {

using namespace jobviz;
using namespace jobviz::clock_test;

namespace {

LogRecord Sync(std::int64_t round, Nanos time) {
  LogRecord r;
  r.kind = RecordKind::kClockSync;
  r.round = round;
  r.start = time;
  return r;
}

}  // namespace

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

}  // namespace unit_clock_align_test
