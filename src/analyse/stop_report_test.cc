#include "analyse/stop_report.h"

#include <catch2/catch.hpp>

#include <map>

#include "analyse/stop_evaluation.h"
#include "model/unfinished_steps.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_stop_report_test {

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

TEST_CASE("One worker stops: named when the logs time it, the hedged suspect when nothing does") {
  size_t timed = 0, untimed = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    sim::StopTruth truth;
    Timeline t = sim::SimulateStop(Hybrid(sim::StopKind::kWorker, seed), &truth);
    if (!truth.stopped) continue;
    const StopReport r = Report(t);
    std::string why;
    INFO("seed " << seed << ": " << r.sentence);
    CHECK(sim::StopReportRight(r, t, truth, &why));
    if (truth.evidence) {
      ++timed;
      REQUIRE(r.kind == StopKind::kStopped);
      CHECK(!r.hedged);
      CHECK(r.sentence.find("The run stopped in step") == 0);
      CHECK(r.sentence.find("past when that job should have ended") != std::string::npos);
      CHECK(r.overdue > 0);
    } else if (r.kind == StopKind::kSuspect) {
      ++untimed;
      CHECK(r.hedged);
      CHECK(r.sentence.find("If the job hung, it hung in") != std::string::npos);
      CHECK(r.sentence.find("If the logs were copied while it ran, nobody is to blame") != std::string::npos);
    }
    const LaneStop& first = r.lanes[static_cast<size_t>(r.first)];
    CHECK(first.state == LaneState::kStuck);
    // Every lane that waits leads to it.
    for (const LaneStop& lane : r.lanes)
      if (lane.state == LaneState::kWaiting) CHECK(lane.waits_on >= 0);
    CHECK(r.unfinished_steps >= 1);
  }
  CHECK(timed >= 5);
  CHECK(untimed >= 2);
}

TEST_CASE("A hang nothing times: --hung turns the suspect into the verdict") {
  size_t checked = 0;
  for (std::uint64_t seed = 1; seed <= 60 && checked < 3; ++seed) {
    sim::StopTruth truth;
    Timeline t = sim::SimulateStop(Hybrid(sim::StopKind::kWorker, seed), &truth);
    if (!truth.stopped || truth.evidence) continue;
    const UnfinishedSteps unfinished = MarkUnfinishedSteps(&t, 2);
    const StopReport plain = ReportStop(t, unfinished);
    if (plain.kind != StopKind::kSuspect) continue;
    const StopReport hung = ReportStop(t, unfinished, StopOptions{.hung = true});
    INFO("seed " << seed << ": " << hung.sentence);
    CHECK(hung.kind == StopKind::kStopped);
    CHECK(!hung.hedged);
    CHECK(hung.first == plain.first);
    CHECK(hung.sentence.find("The job hung in step") == 0);
    ++checked;
  }
  CHECK(checked == 3);
}

TEST_CASE("The first to stop is named with the host libjobviz's start line gives") {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    sim::StopTruth truth;
    Timeline t = sim::SimulateStop(Hybrid(sim::StopKind::kWorker, seed), &truth);
    if (!truth.stopped || !truth.evidence) continue;
    const StopReport before = Report(t);
    REQUIRE(before.kind == StopKind::kStopped);
    CHECK(before.sentence.find(", host ") == std::string::npos);
    Timeline named = t;
    for (Worker* w : AllWorkers(&named)) {
      LogRecord header;
      header.kind = RecordKind::kProfilerHeader;
      header.type = "gpu-node-" + std::to_string(w->machine);
      w->markers.push_back(header);
    }
    const StopReport r = Report(named);
    const Worker& first = *AllWorkers(named)[r.first_worker];
    INFO(r.sentence);
    CHECK(WorkerHost(first) == "gpu-node-" + std::to_string(first.machine));
    CHECK(r.sentence.find("(stage " + std::to_string(r.lanes[static_cast<size_t>(r.first)].stage)) != std::string::npos);
    CHECK(r.sentence.find(", host gpu-node-" + std::to_string(first.machine) + ")") != std::string::npos);
    return;
  }
  FAIL("no timed stop among the seeds");
}

TEST_CASE("Logs copied at one moment for all: the step is unfinished and nobody is named without a hedge") {
  size_t cut = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    sim::StopTruth truth;
    sim::StopRun spec = Hybrid(sim::StopKind::kCut, seed);
    spec.run.pp = 8;
    spec.run.forward = (seed % 3 + 1) * 7'000'000;  // 7 to 21 ms: quiet stretches of tens of ms in the bubble
    Timeline t = sim::SimulateStop(spec, &truth);
    const StopReport r = Report(t);
    INFO("seed " << seed << ": " << r.sentence);
    CHECK(r.kind != StopKind::kStopped);
    if (r.kind == StopKind::kCutTogether) {
      ++cut;
      CHECK(r.sentence.find("still running, or copied early? Nobody is to blame") != std::string::npos);
    }
  }
  CHECK(cut >= 15);  // the rest: hedged suspects, or a copy between two steps
}

TEST_CASE("A step's gradient all-reduce that never completes: the step and the group, not the last stage") {
  for (const bool global : {true, false})
    for (const bool kill_lines : {false, true}) {
      size_t checked = 0;
      for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        sim::StopRun spec = Hybrid(sim::StopKind::kAllReduce, seed);
        spec.barrier = global;
        spec.global_hang = global;
        spec.kill_lines = kill_lines;
        spec.run.steps = 1 + seed % 3;  // a first step too, where nothing shows the all-reduce is global
        sim::StopTruth truth;
        Timeline t = sim::SimulateStop(spec, &truth);
        const StopReport r = Report(t);
        std::string why;
        INFO("seed " << seed << (global ? " global" : " replicas") << (kill_lines ? " kill lines: " : ": ") << r.sentence);
        REQUIRE(sim::StopReportRight(r, t, truth, &why));
        if (r.kind == StopKind::kFinished) continue;  // a first step's hang that nothing tells from a whole step
        CHECK(r.kind == StopKind::kAllReduce);
        CHECK(r.first == -1);
        // Other stages going on past a replicas' all-reduce time it too.
        if (global) CHECK(r.hedged == !kill_lines);
        else CHECK(r.hedged == (r.overdue == 0));
        CHECK(r.sentence.find(global ? "global gradient all-reduce" : "gradient all-reduce of stage") != std::string::npos);
        for (const LaneStop& lane : r.lanes) CHECK(lane.state != LaneState::kStuck);
        ++checked;
      }
      CHECK(checked >= 10);
    }
}

TEST_CASE("A rank that died inside the all-reduce while the others' logs went on is named") {
  sim::StopRun spec = Hybrid(sim::StopKind::kStage, 1);
  spec.barrier = true;
  spec.kill_lines = true;
  size_t checked = 0;
  for (std::uint64_t seed = 1; seed <= 400 && checked < 3; ++seed) {
    spec.seed = seed;
    sim::StopTruth truth;
    Timeline t = sim::SimulateStop(spec, &truth);
    if (!truth.stopped || !truth.first.front().in_all_reduce || !truth.evidence) continue;
    const StopReport r = Report(t);
    std::string why;
    INFO("seed " << seed << ": " << r.sentence);
    CHECK(r.kind == StopKind::kStopped);
    CHECK(sim::StopReportRight(r, t, truth, &why));
    ++checked;
  }
  CHECK(checked == 3);
}

TEST_CASE("A hang between steps: every step finished, nobody is named") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    sim::StopRun spec = Hybrid(sim::StopKind::kBetweenSteps, seed);
    spec.kill_lines = seed % 2 == 0;
    sim::StopTruth truth;
    Timeline t = sim::SimulateStop(spec, &truth);
    const StopReport r = Report(t);
    INFO("seed " << seed << ": " << r.sentence);
    CHECK(r.kind == StopKind::kFinished);
    CHECK(r.unfinished_steps == 0);
  }
}

TEST_CASE("--hung after a finished step: between steps, unless the logs say the run ended") {
  sim::StopTruth truth;
  const Timeline finished = sim::SimulateStop(Hybrid(sim::StopKind::kBetweenSteps, 3), &truth);
  const auto report = [](Timeline t) {
    const UnfinishedSteps unfinished = MarkUnfinishedSteps(&t, 2);
    return ReportStop(t, unfinished, StopOptions{.hung = true});
  };
  const auto last_job_line = [](const Worker& w) {
    std::uint64_t line = 0;
    for (const Job& job : w.jobs) line = std::max<std::uint64_t>(line, job.line);
    return line;
  };
  SECTION("nothing says it ended") {
    const StopReport r = report(finished);
    CHECK(r.kind == StopKind::kBetweenSteps);
    CHECK(r.sentence.find("Stalled between step") == 0);
    CHECK(r.first == -1);
  }
  SECTION("libjobviz's closing line after the jobs of every log") {
    Timeline t = finished;
    for (Worker* w : AllWorkers(&t)) w->end.closed_line = last_job_line(*w) + 2;
    CHECK(LogsSayRunEnded(t, t.steps.back().step));
    CHECK(report(t).kind == StopKind::kFinished);
    // One log without it: that process may have closed on its way down.
    AllWorkers(&t).back()->end.closed_line = 0;
    CHECK(report(t).kind == StopKind::kBetweenSteps);
    // One before its log's last job is no end either.
    AllWorkers(&t).back()->end.closed_line = last_job_line(*AllWorkers(t).back()) - 1;
    CHECK(report(t).kind == StopKind::kBetweenSteps);
  }
  SECTION("a trainer's 'Training completed' after the jobs of one log") {
    Timeline t = finished;
    Worker& w = *AllWorkers(&t)[3];
    w.end.training_completed_line = last_job_line(w) + 1;
    CHECK(RunEndedBecause(t, t.steps.back().step).find("says 'Training completed'") != std::string::npos);
    CHECK(report(t).kind == StopKind::kFinished);
  }
  SECTION("a profiling window whose last step it is") {
    Timeline t = finished;
    LogRecord window;
    window.kind = RecordKind::kProfilerWindow;
    window.step = t.steps.front().step;
    window.window_end_step = StepNumber(t.steps.back().step) + 2;
    AllWorkers(&t)[1]->markers.push_back(window);
    CHECK(report(t).kind == StopKind::kFinished);
    AllWorkers(&t)[1]->markers.back().window_end_step += 1;  // one step more was to come
    CHECK(report(t).kind == StopKind::kBetweenSteps);
  }
  SECTION("without --hung a finished run is finished") {
    Timeline t = finished;
    CHECK(Report(t).kind == StopKind::kFinished);
  }
}

TEST_CASE("A stamp earlier than its log's last job does not end the log") {
  sim::StopTruth truth;
  Timeline t = sim::SimulateStop(Hybrid(sim::StopKind::kFinished, 1), &truth);
  Worker& w = t.machines[0].workers[0];
  w.end.stamped = LastJobEnd(w) - 6'800'000'000'000;  // a noise line stamped long before it was printed
  const StopReport r = Report(t);
  CHECK(!r.workers[0].stamped);
  CHECK(r.workers[0].last_time == LastJobEnd(w));
  CHECK(r.workers[0].before_others < 50'000'000);
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
// the counts look whole, and only the live ranks' last lines (NCCL's
// timeout at the kill) tell the dead one; or a machine died before its
// first job.
TEST_CASE("First step: a stop at its optimizer, or a stage with no job") {
  sim::StopRun spec;
  spec.run.pp = 8;
  spec.run.mp = spec.run.dp = 1;
  spec.run.topology = false;
  spec.run.steps = 1;
  spec.barrier = true;
  spec.kill_lines = true;
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

TEST_CASE("Random runs: each class meets its goal (docs/analysis.md)") {
  std::map<std::string, std::pair<int, int>> classes;  // right, runs
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    const sim::StopRun spec = sim::RandomStopRun(seed);
    sim::StopTruth truth;
    Timeline t = sim::SimulateStop(spec, &truth);
    const StopReport r = Report(t);
    std::string why;
    auto& [right, runs] = classes[sim::JudgedAs(truth)];
    right += sim::StopReportRight(r, t, truth, &why);
    ++runs;
  }
  for (const auto& [name, counts] : classes) {
    INFO(name << ": " << counts.first << " of " << counts.second);
    CHECK(counts.first * 100 >= counts.second * (name == "no stop" ? 100 : name == "stop, not timed" ? 95 : 99));
  }
  CHECK(classes.size() == 4);
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

}  // namespace unit_stop_report_test
