#include "analyse/stop_report.h"

#include <catch2/catch.hpp>

#include "analyse/stop_simulator.h"
#include "model/unfinished_steps.h"

using namespace jobviz;

namespace {

StopReport Report(Timeline& t) {
  const UnfinishedSteps unfinished = MarkUnfinishedSteps(&t, 2);
  return ReportStop(t, unfinished);
}

sim::StopRun Hybrid(sim::StopKind kind, std::uint64_t seed) {
  sim::StopRun spec;
  spec.run.pp = 4;
  spec.run.mp = 2;
  spec.run.dp = 2;
  spec.run.steps = 3;
  spec.stop = kind;
  spec.seed = seed;
  return spec;
}

}  // namespace

TEST_CASE("A run that finished: no step is unfinished, nobody is named") {
  sim::StopTruth truth;
  Timeline t = sim::SimulateStop(Hybrid(sim::StopKind::kFinished, 1), &truth);
  const StopReport r = Report(t);
  CHECK(r.kind == StopKind::kFinished);
  CHECK(r.sentence == "The run finished its last step.");
  CHECK(r.unfinished_steps == 0);
  CHECK(r.first == -1);
}

TEST_CASE("One worker stops: its stage, last and next job are named, and the others wait on it") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    sim::StopTruth truth;
    Timeline t = sim::SimulateStop(Hybrid(sim::StopKind::kWorker, seed), &truth);
    if (!truth.stopped) continue;
    const StopReport r = Report(t);
    std::string why;
    INFO("seed " << seed << ": " << r.sentence);
    CHECK(sim::StopReportRight(r, t, truth, &why));
    REQUIRE(r.kind == StopKind::kStopped);
    const LaneStop& first = r.lanes[static_cast<size_t>(r.first)];
    CHECK(first.state == LaneState::kStuck);
    // Every lane that waits leads to it.
    for (const LaneStop& lane : r.lanes)
      if (lane.state == LaneState::kWaiting) CHECK(lane.waits_on >= 0);
    CHECK(r.unfinished_steps >= 1);
    CHECK(r.sentence.find("The run stopped in step") == 0);
  }
}

TEST_CASE("Logs cut at one moment for all: the step is unfinished and nobody stands out") {
  size_t cut = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    sim::StopTruth truth;
    Timeline t = sim::SimulateStop(Hybrid(sim::StopKind::kCut, seed), &truth);
    const StopReport r = Report(t);
    INFO("seed " << seed << ": " << r.sentence);
    CHECK(r.kind != StopKind::kStopped);
    cut += r.kind == StopKind::kCutTogether;
  }
  CHECK(cut >= 8);  // the rest: cut between two steps, where every step finished
}

namespace {

// A hybrid run whose stopped stage holds a worker with a libjobviz in-flight
// line of a job that had started (live workers blocked behind it write
// theirs too): the first of 30 seeds that gives one; null worker if none.
struct HungRun {
  Timeline timeline;
  Worker* dead = nullptr;
};
HungRun RunWithHungWorker() {
  sim::StopRun spec = Hybrid(sim::StopKind::kStage, 3);
  spec.in_flight = true;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    spec.seed = seed;
    sim::StopTruth truth;
    HungRun run{sim::SimulateStop(spec, &truth)};
    const std::vector<const Worker*> workers = AllWorkers(run.timeline);
    for (const int w : truth.dead_workers) {
      const Worker* worker = workers[static_cast<size_t>(w)];
      if (!worker->in_flight.empty() && worker->in_flight[0].started) run.dead = const_cast<Worker*>(worker);
    }
    if (run.dead) return run;
  }
  return {};
}

}  // namespace

TEST_CASE("An in-flight line names the job a rank hangs in, and how long") {
  HungRun run = RunWithHungWorker();
  REQUIRE(run.dead);
  const StopReport r = Report(run.timeline);
  REQUIRE(r.kind == StopKind::kStopped);
  const LaneStop& first = r.lanes[static_cast<size_t>(r.first)];
  CHECK(first.in_flight);
  CHECK(first.in_flight_seen > first.in_flight_since);
  CHECK(r.sentence.find("stuck in") != std::string::npos);
}

TEST_CASE("A job queued behind the one a rank hangs in does not hide it, whichever line came later") {
  // Seen on a GPU (tools/gpu-checks): a kernel that never ends, and the next
  // job enqueued behind it on the same stream; the watchdog writes "still
  // running" for the first and "not started" for the second, a pass later.
  HungRun run = RunWithHungWorker();
  REQUIRE(run.dead);
  const InFlightJob hung = run.dead->in_flight[0];
  InFlightJob queued = hung;
  queued.micro_batch = hung.micro_batch + 1;
  queued.started = false;
  queued.start = hung.start + 1'000;     // enqueued after it
  queued.seen = hung.seen + 20'000'000;  // a watchdog pass later
  queued.line = hung.line + 1;
  run.dead->in_flight.push_back(queued);
  const StopReport r = Report(run.timeline);
  REQUIRE(r.kind == StopKind::kStopped);
  const LaneStop& first = r.lanes[static_cast<size_t>(r.first)];
  CHECK(first.in_flight_started);
  CHECK(first.next.type == hung.type);
  CHECK(first.next.micro_batch == hung.micro_batch);
  CHECK(r.sentence.find("stuck in " + hung.type.str() + " " + std::to_string(hung.micro_batch)) != std::string::npos);
}

TEST_CASE("Workers blocked inside a job on an input that never came wait; they are not the first to stop") {
  sim::StopRun spec = Hybrid(sim::StopKind::kWorker, 1);
  spec.in_flight = true;
  size_t checked = 0;
  for (std::uint64_t seed = 1; seed <= 30 && checked < 5; ++seed) {
    spec.seed = seed;
    sim::StopTruth truth;
    Timeline t = sim::SimulateStop(spec, &truth);
    if (!truth.stopped) continue;
    const StopReport r = Report(t);
    std::string why;
    INFO("seed " << seed << ": " << r.sentence);
    CHECK(sim::StopReportRight(r, t, truth, &why));
    size_t waiting_inside = 0;
    for (const LaneStop& lane : r.lanes) waiting_inside += lane.in_flight && lane.state == LaneState::kWaiting;
    checked += waiting_inside > 0;
  }
  CHECK(checked == 5);
}

// The first step under a global all-reduce: no optimizer line anywhere, so
// the counts look whole; or a machine died before its first job.
TEST_CASE("A first step that never reached its optimizer, or a stage with no job at all: still named") {
  sim::StopRun spec;
  spec.run.pp = 8;
  spec.run.mp = spec.run.dp = 1;
  spec.run.topology = false;
  spec.run.steps = 1;
  spec.barrier = true;
  size_t at_optimizer = 0, no_job = 0;
  for (std::uint64_t seed = 1; seed <= 400 && (at_optimizer < 3 || no_job < 3); ++seed) {
    spec.seed = seed;
    spec.stop = seed % 2 ? sim::StopKind::kWorker : sim::StopKind::kMachine;
    sim::StopTruth truth;
    Timeline t = sim::SimulateStop(spec, &truth);
    if (!truth.stopped) continue;
    const bool optimizer = truth.first.front().next_type == "optimizer";
    const bool none = truth.first.front().last_type.empty();
    if (!optimizer && !none) continue;
    const StopReport r = Report(t);
    std::string why;
    INFO("seed " << seed << ": " << r.sentence);
    CHECK(sim::StopReportRight(r, t, truth, &why));
    CHECK(r.unfinished_steps == 1);
    at_optimizer += optimizer;
    no_job += none;
  }
  CHECK(at_optimizer >= 3);
  CHECK(no_job >= 3);
}

TEST_CASE("Random stopped runs of 8 to 512 workers: the right stage and jobs in at least 99% (docs/analysis.md)") {
  int right = 0, runs = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const sim::StopRun spec = sim::RandomStopRun(seed);
    sim::StopTruth truth;
    Timeline t = sim::SimulateStop(spec, &truth);
    const StopReport r = Report(t);
    std::string why;
    right += sim::StopReportRight(r, t, truth, &why);
    ++runs;
  }
  CHECK(right * 100 >= runs * 99);
}

TEST_CASE("Ten thousand workers: no crash, a worker named") {
  sim::StopRun spec;
  spec.run.pp = 8;
  spec.run.mp = 1;
  spec.run.dp = 1250;
  spec.run.micro_batches = 4;
  spec.run.steps = 2;
  spec.stop = sim::StopKind::kWorker;
  spec.seed = 7;
  sim::StopTruth truth;
  Timeline t = sim::SimulateStop(spec, &truth);
  const StopReport r = Report(t);
  CHECK(r.lanes.size() == 10'000);
  CHECK(r.workers.size() == 10'000);
  if (truth.stopped) CHECK(r.kind == StopKind::kStopped);
}
