#include "align/clock_jumps.h"

#include <catch2/catch.hpp>

#include "analyse/run_simulator.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_clock_jumps_test {

using namespace jobviz;
using namespace jobviz::sim;

namespace {

constexpr Nanos kSecond = 1'000'000'000;

// pp 4 x mp 2 x dp 2 on four machines of four workers: machine0 holds
// replica 0's stages 0-1, machine1 its stages 2-3 (two tensor-parallel
// peers: two stage pairs cross from machine0 to machine1).
Timeline Run(int steps = 6) {
  SimRun run;
  run.steps = steps;
  Timeline t = Simulate(run);
  for (Machine& machine : t.machines)
    for (Worker& worker : machine.workers) worker.file = machine.name + "/workerlog." + std::to_string(worker.index);
  return t;
}

// pp 6 x mp 2: one pipeline over three machines, machine1 in the middle.
Timeline ThreeMachines() {
  SimRun run;
  run.pp = 6;
  run.dp = 1;
  run.steps = 6;
  Timeline t = Simulate(run);
  for (Machine& machine : t.machines)
    for (Worker& worker : machine.workers) worker.file = machine.name + "/workerlog." + std::to_string(worker.index);
  return t;
}

// Every time machine `m` logged from step `from` on, moved by `shift`: its clock stepped.
void Jump(Timeline& t, size_t m, std::int64_t from, Nanos shift) {
  for (Worker& worker : t.machines[m].workers)
    for (Job& job : worker.jobs)
      if (job.step >= from) {
        job.start += shift;
        job.end += shift;
      }
}

std::uint64_t FirstLineOfStep(const Worker& worker, std::int64_t step) {
  std::uint64_t first = UINT64_MAX;
  for (const Job& job : worker.jobs)
    if (job.step == step) first = std::min<std::uint64_t>(first, job.line);
  return first;
}

void CheckSameTimes(const Timeline& a, const Timeline& b) {
  for (size_t m = 0; m < a.machines.size(); ++m)
    for (size_t w = 0; w < a.machines[m].workers.size(); ++w) {
      const auto& x = a.machines[m].workers[w].jobs;
      const auto& y = b.machines[m].workers[w].jobs;
      REQUIRE(x.size() == y.size());
      for (size_t i = 0; i < x.size(); ++i) {
        CHECK(x[i].line == y[i].line);
        CHECK(x[i].start == y[i].start);
        CHECK(x[i].end == y[i].end);
      }
    }
}

}  // namespace

TEST_CASE("A machine's clock stepping forward or back is found from its hand-offs, and undone") {
  for (const Nanos shift : {20 * kSecond, -20 * kSecond, Nanos{5'000'000}}) {
    INFO("shift " << shift);
    const Timeline truth = Run();
    Timeline t = truth;
    const std::string name = t.machines[1].name;
    Jump(t, 1, 3, shift);
    const std::vector<ClockJump> jumps = FindClockJumps(t, 0);
    // Two tensor-parallel peers cross to machine1: one jump, not two.
    REQUIRE(jumps.size() == 1);
    const ClockJump& jump = jumps[0];
    CHECK(jump.machine == name);
    CHECK(jump.against == t.machines[0].name);
    // Within the hand-offs' own latency (20 us each way).
    CHECK(std::abs(jump.shift - shift) <= 20'000);
    REQUIRE(jump.from_lines.size() == t.machines[1].workers.size());
    for (size_t w = 0; w < jump.from_lines.size(); ++w) {
      CHECK(jump.from_lines[w].first == t.machines[1].workers[w].file);
      CHECK(jump.from_lines[w].second == FirstLineOfStep(t.machines[1].workers[w], 3));
    }
    // Undone with the shift found: the times are the true ones, up to the estimate's error.
    ClockJump exact = jump;
    exact.shift = shift;
    UndoClockJumps({exact}, t);
    CheckSameTimes(t, truth);
    CHECK(ClockJumpText(jump).find(shift > 0 ? "forward" : "back") != std::string::npos);
  }
}

TEST_CASE("A clock that only drifts, or a job with a stale timer, is not a jump") {
  Timeline drifting = Run(40);
  // 2,000 ppm: 2.4 ms over the run, more than kMinClockJump, a little a step.
  const Nanos t0 = drifting.machines[1].workers[0].jobs.front().start;
  for (Worker& worker : drifting.machines[1].workers)
    for (Job& job : worker.jobs) {
      job.start += (job.start - t0) / 500;
      job.end += (job.end - t0) / 500;
    }
  CHECK(FindClockJumps(drifting, 0).empty());

  Timeline stale = Run();
  Worker& worker = stale.machines[1].workers[0];
  worker.jobs[worker.jobs.size() / 2].start -= 30 * kSecond;  // a timer that never fired
  worker.jobs[worker.jobs.size() / 2].end -= 30 * kSecond;
  CHECK(FindClockJumps(stale, 0).empty());

  CHECK(FindClockJumps(Run(), 0).empty());
}

TEST_CASE("Hand-offs the pairing does not fit (micro-batches numbered otherwise) find no jump") {
  Timeline t = Run(16);
  Random random{7};
  for (Worker& worker : t.machines[1].workers)
    for (Job& job : worker.jobs) job.micro_batch = random.Below(8);
  CHECK(FindClockJumps(t, 0).empty());
}

TEST_CASE("The reference machine is never the one moved; a later window is undone by lines alone") {
  Timeline t = Run();
  Jump(t, 0, 2, 3 * kSecond);  // the reference's clock jumps: machine1 is moved the other way
  const std::vector<ClockJump> jumps = FindClockJumps(t, 0);
  REQUIRE(jumps.size() == 1);
  CHECK(jumps[0].machine == t.machines[1].name);
  CHECK(std::abs(jumps[0].shift + 3 * kSecond) <= 20'000);

  // jobviz follow: a turn that starts after the jump holds only lines past
  // it; a jump found earlier moves all of them, and nothing else.
  const Timeline truth = Run();
  Timeline later = truth;
  Jump(later, 1, 0, 7 * kSecond);
  ClockJump known{later.machines[1].name, 7 * kSecond, {}, later.machines[0].name};
  for (const Worker& worker : later.machines[1].workers) known.from_lines.emplace_back(worker.file, 1);
  known.from_lines.emplace_back("machine9/workerlog.0", 1);  // a log not in this timeline
  UndoClockJumps({known}, later);
  CheckSameTimes(later, truth);
  CHECK(FindClockJumps(later, 0).empty());
}

TEST_CASE("A machine in the middle of the pipeline jumps: it alone is moved; the reference: all the others") {
  const Timeline truth = ThreeMachines();
  REQUIRE(truth.machines.size() == 3);
  Timeline middle = truth;
  Jump(middle, 1, 2, 4 * kSecond);  // machine1's hand-offs with both neighbours disagree from step 2 on
  std::vector<ClockJump> jumps = FindClockJumps(middle, 0);
  REQUIRE(jumps.size() == 1);
  CHECK(jumps[0].machine == truth.machines[1].name);
  CHECK(std::abs(jumps[0].shift - 4 * kSecond) <= 20'000);
  jumps[0].shift = 4 * kSecond;
  UndoClockJumps(jumps, middle);
  CheckSameTimes(middle, truth);

  Timeline reference = truth;
  Jump(reference, 0, 3, -2 * kSecond);
  jumps = FindClockJumps(reference, 0);
  REQUIRE(jumps.size() == 2);
  for (const ClockJump& jump : jumps) CHECK(std::abs(jump.shift - 2 * kSecond) <= 40'000);
  CHECK(jumps[0].machine == truth.machines[1].name);
  CHECK(jumps[1].machine == truth.machines[2].name);
}

// jobviz follow reads logs as they are written: machine2's, behind, has not
// reached the step machine1's clock jumped in.
void CutFrom(Timeline& t, size_t m, std::int64_t step) {
  for (Worker& worker : t.machines[m].workers) std::erase_if(worker.jobs, [&](const Job& job) { return job.step >= step; });
}

TEST_CASE("A log behind the jump is not moved with its neighbour until it gets there") {
  const Timeline truth = ThreeMachines();
  for (const bool both : {false, true}) {  // machine2 keeps its clock / steps with machine1's
    INFO("machine2 jumps too: " << both);
    Timeline full = truth;
    Jump(full, 1, 3, 4 * kSecond);
    if (both) Jump(full, 2, 3, 4 * kSecond);
    Timeline behind = full;
    CutFrom(behind, 2, 3);
    std::vector<ClockJump> known = FindClockJumps(behind, 0);
    REQUIRE(known.size() == 1);
    CHECK(known[0].machine == truth.machines[1].name);
    known[0].shift = 4 * kSecond;
    // The next look, machine2's log there: machine1's jump undone first;
    // machine2's own, if it has one, found against machine1's mended clock.
    UndoClockJumps(known, full);
    std::vector<ClockJump> later = FindClockJumps(full, 0);
    REQUIRE(later.size() == (both ? 1u : 0u));
    if (both) {
      CHECK(later[0].machine == truth.machines[2].name);
      CHECK(later[0].against == truth.machines[1].name);
      later[0].shift = 4 * kSecond;
      UndoClockJumps(later, full);
    }
    CheckSameTimes(full, truth);
  }
}

TEST_CASE("A jump against a neighbour whose own log is behind waits: it may be the neighbour's") {
  // machine1's clock jumps at step 3; machine0, the reference, has not
  // written step 3 yet. Against machine1, machine2 seems to jump back: it
  // is machine1 that moved, which only machine0's log can tell.
  const Timeline truth = ThreeMachines();
  Timeline full = truth;
  Jump(full, 1, 3, 4 * kSecond);
  Timeline behind = full;
  CutFrom(behind, 0, 3);
  CHECK(FindClockJumps(behind, 0).empty());
  std::vector<ClockJump> later = FindClockJumps(full, 0);
  REQUIRE(later.size() == 1);
  CHECK(later[0].machine == truth.machines[1].name);
  later[0].shift = 4 * kSecond;
  UndoClockJumps(later, full);
  CheckSameTimes(full, truth);
}

}  // namespace unit_clock_jumps_test
