// The bottleneck analysis against a simulator of its own: hybrid-parallel
// 1F1B runs with one known cause injected, and the same run without it (the
// counterfactual). The what-if that removes the cause must predict the
// counterfactual's measured time per step within 3%, the top cause must be
// the injected one, and a clean run flags nothing.
#include "analyse/bottleneck.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "analyse/analysis.h"
#include "analyse/run_simulator.h"
#include "analyse/step_graph.h"
#include "analyse/summary.h"
#include "emit/summary_tables.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_bottleneck_test {

using namespace jobviz;
using jobviz::sim::kUs;
using jobviz::sim::SimRun;
using jobviz::sim::Simulate;

namespace {

Analysis Run(const SimRun& run) { return Analyze(Simulate(run), 2); }

void CheckPrediction(const SimRun& injected, WhatIfKind kind, const SimRun& counterfactual) {
  const Analysis a = Run(injected);
  const Analysis c = Run(counterfactual);
  REQUIRE(a.bottleneck.ran);
  REQUIRE(c.bottleneck.ran);
  const double predicted = PredictedWallPerStep(a.bottleneck, kind), actual = MeasuredWallPerStep(c.bottleneck);
  INFO(WhatIfKey(kind) << ": predicted " << predicted / 1e6 << " ms per step, counterfactual " << actual / 1e6 << " ms");
  CHECK(std::abs(predicted - actual) / actual < 0.03);
  REQUIRE(!a.bottleneck.causes.empty());
  CHECK(a.bottleneck.causes.front().kind == kind);
}

}  // namespace

TEST_CASE("The simulator makes what the analysis expects: 1F1B, peers in lockstep, replicas, the ideal") {
  const Analysis a = Run({});
  CHECK(a.stages == 4);
  CHECK(a.micro_batches == 8);
  CHECK(a.schedule.name == "1F1B");
  CHECK(a.bottleneck.steps == 4);
  CHECK(a.bottleneck.replay_error < 1e-9);  // the replay with nothing removed is the measured run
  CHECK(a.bottleneck.contradicted == 0);
}

TEST_CASE("A clean run flags nothing") {
  const Analysis a = Run({});
  CHECK(a.slow_workers.empty());
  for (const Cause& cause : a.bottleneck.causes) INFO(cause.text);
  CHECK(a.bottleneck.causes.empty());
  // With everything removed, the bubble comes close to the schedule's ideal.
  REQUIRE(a.schedule.ideal_bubble);
  CHECK(a.bottleneck.what_if[static_cast<size_t>(WhatIfKind::kAll)].bubble_ratio ==
        Approx(*a.schedule.ideal_bubble).margin(0.06));
}

TEST_CASE("The critical path adds up to the step and starts at the first stage's first forward") {
  const Analysis a = Run({});
  const Bottleneck& b = a.bottleneck;
  REQUIRE(b.critical_paths.size() == 4);
  for (const CriticalPathStep& step : b.critical_paths) {
    Nanos total = step.step_start;
    for (const CriticalJob& job : step.jobs) total += job.hand_off + job.stall + (job.end - job.start);
    CHECK(total == step.end - step.start);
    REQUIRE(!step.jobs.empty());
    CHECK(step.jobs.front().stage == 0);
    CHECK(step.jobs.front().type == "forward");
    CHECK(step.jobs.back().type == "optimizer");
  }
  Nanos steps_and_gaps = b.path.step_gaps;
  for (const CriticalPathStep& step : b.critical_paths) steps_and_gaps += step.end - step.start;
  CHECK(b.path.total() == steps_and_gaps);
  // Marked jobs include every peer of a job on the path.
  size_t marked = 0;
  for (const auto& jobs : b.marks) marked += jobs.size();
  size_t listed = 0;
  for (const CriticalPathStep& step : b.critical_paths) listed += step.jobs.size();
  CHECK(marked == 2 * listed);
}

TEST_CASE("One slow stage: balancing it predicts the balanced run") {
  SimRun slow;
  slow.stage_factor[2] = 1.5;
  CheckPrediction(slow, WhatIfKind::kBalancedStages, SimRun{});
  const Analysis a = Run(slow);
  CHECK(a.slow_workers.empty());  // every worker of the stage is slow: the stage is, not a worker
  CHECK(a.bottleneck.causes.front().text.find("stage 2 is the bottleneck") == 0);
}

TEST_CASE("One slow link: free hand-offs predict the run without it, and the link is named") {
  SimRun slow;
  slow.link_extra[{1, 2}] = 300 * kUs;
  slow.link_extra[{2, 1}] = 300 * kUs;
  CheckPrediction(slow, WhatIfKind::kFreeHandOffs, SimRun{});
  const Analysis a = Run(slow);
  const std::string text = a.bottleneck.causes.front().text;
  INFO(text);
  CHECK((text.find("stage 1\u21922") != std::string::npos || text.find("stage 2\u21921") != std::string::npos));
}

TEST_CASE("One slow tensor-parallel peer is found, and fixing it predicts the run without it") {
  SimRun slow;
  slow.worker_factor[{0, 1, 1}] = 1.3;
  CheckPrediction(slow, WhatIfKind::kNoSlowWorkers, SimRun{});
  const Analysis a = Run(slow);
  REQUIRE(a.slow_workers.size() == 1);
  CHECK(a.slow_workers[0].role.replica == 0);
  CHECK(a.slow_workers[0].role.stage == 1);
  CHECK(a.slow_workers[0].role.peer == 1);
  CHECK(a.slow_workers[0].factor == Approx(1.3).margin(0.03));
  REQUIRE(a.slow_workers[0].types.size() == 2);
  CHECK(a.slow_workers[0].types[0].slower == a.slow_workers[0].types[0].jobs);
}

TEST_CASE("One slow replica: its workers are found, and fixing them predicts the run without it") {
  SimRun slow;
  for (int s = 0; s < 4; ++s)
    for (int p = 0; p < 2; ++p) slow.worker_factor[{1, s, p}] = 1.3;
  CheckPrediction(slow, WhatIfKind::kNoSlowWorkers, SimRun{});
  const Analysis a = Run(slow);
  CHECK(a.slow_workers.size() == 8);
  for (const SlowWorker& w : a.slow_workers) {
    CHECK(w.role.replica == 1);
    CHECK(w.compared_with == "its peers and the other replicas");  // its peer is as slow: the median is the other replica's
  }
}

TEST_CASE("Outlier jobs: every job at its median predicts the run without them; no worker is flagged") {
  SimRun noisy;
  noisy.outlier_share = 0.05;
  CheckPrediction(noisy, WhatIfKind::kNoOutliers, SimRun{});
  CHECK(Run(noisy).slow_workers.empty());
}

TEST_CASE("Long gaps between steps are a cause of their own") {
  SimRun gaps;
  gaps.step_gap = 6000 * kUs;
  CheckPrediction(gaps, WhatIfKind::kNoStepGaps, SimRun{});
}

TEST_CASE("A pipeline without peers or replicas: a slow worker is a slow stage") {
  SimRun plain;
  plain.mp = 1;
  plain.dp = 1;
  plain.topology = false;
  SimRun slow = plain;
  slow.stage_factor[3] = 1.3;
  CheckPrediction(slow, WhatIfKind::kBalancedStages, plain);
  const Analysis a = Run(slow);
  CHECK(a.bottleneck.per_worker_only);
  CHECK(a.slow_workers.empty());
  CHECK(a.bottleneck.causes.front().text.find("stage 3 is the bottleneck") == 0);
}

TEST_CASE("Hand-offs the clocks contradict are left out and counted; the replay still reproduces the steps") {
  Timeline t = Simulate({});
  // Shift one stage's clock back: its forwards now start before their inputs end.
  for (Worker& w : t.machines[0].workers)
    if (w.role.stage == 1)
      for (Job& job : w.jobs) {
        job.start -= 3000 * kUs;
        job.end -= 3000 * kUs;
      }
  const Analysis a = Analyze(t, 1);
  CHECK(a.bottleneck.contradicted > 0);
}

TEST_CASE("The summary carries the breakdown, the what-ifs and the slow workers; gates can name them") {
  SimRun slow;
  slow.worker_factor[{0, 1, 1}] = 1.3;
  const Timeline t = Simulate(slow);
  const Analysis a = Analyze(t, 1);
  const nlohmann::json doc = SummaryJson(a, t, {});
  CHECK(doc["slow_workers"].size() == 1);
  CHECK(doc["what_if"]["no_slow_workers"]["gain"].get<double>() > 0.05);
  CHECK(doc["bottleneck"]["causes"][0]["what_if"] == "no_slow_workers");
  CHECK(doc["critical_paths"].size() == 4);
  std::string error;
  CHECK(ResolveMetric(doc, "slow_workers", &error) == 1.0);
  CHECK(ResolveMetric(doc, "what_if.no_slow_workers.gain", &error) > 0.05);
  const auto gates = EvaluateGates({*ParseCondition("slow_workers > 0", &error),
                                    *ParseCondition("what_if.balanced_stages.gain > 0.10", &error)}, doc);
  CHECK(gates[0].failed);
  CHECK_FALSE(gates[1].failed);
  // The verdict comes first in every rendering of the sections.
  const std::vector<SummarySection> sections = SummarySections(a, t);
  REQUIRE(sections.size() > 4);
  // Plain words first: who, how much slower, what to check, what it gains.
  CHECK(sections[0].text.find("machine0 worker 3 runs its jobs 1.3") == 0);
  CHECK(sections[0].text.find("check that GPU") != std::string::npos);
  CHECK(sections[1].text.find("Pipeline bubble") == 0);
  CHECK(sections[2].text.find("Top cause: slow worker machine0 worker 3") == 0);
  size_t slow_line = 0;
  while (slow_line < sections.size() && sections[slow_line].text.find("Slow worker: machine0 worker 3") != 0) ++slow_line;
  CHECK(slow_line < 5);
  CHECK(sections[slow_line].text.find("1.30x its peers and the other replicas") != std::string::npos);
}

TEST_CASE("Hand-offs pair by rank and micro-batch, and by micro-batch alone where a job is missing on one side") {
  Timeline t;
  t.machines.emplace_back("m");
  for (int w = 0; w < 2; ++w) {
    Worker worker;
    worker.index = w;
    for (std::int64_t mb = 0; mb < 4; ++mb) {
      if (w == 1 && mb == 1) continue;  // stage 1 never logged micro-batch 1's forward
      const Nanos start = mb * 100 * kUs + w * 50 * kUs;
      worker.jobs.push_back(Job{"0", "forward", mb, start, start + 40 * kUs, static_cast<std::uint64_t>(mb + 1), 0});
    }
    t.machines[0].workers.push_back(worker);
  }
  const GraphLanes lanes = MakeGraphLanes(t);
  REQUIRE(lanes.lanes.size() == 2);
  std::vector<std::uint32_t> jobs0 = {0, 1, 2, 3}, jobs1 = {0, 1, 2};
  const StepGraph g = BuildStepGraph(lanes, {std::span<const std::uint32_t>(jobs0), std::span<const std::uint32_t>(jobs1)});
  size_t checked = 0;
  for (const StageJob& node : g.jobs) {
    if (node.lane != 1) continue;
    REQUIRE(node.inputs == 1);
    const StageJob& sender = g.jobs[g.inputs[node.first_input].from];
    CHECK(sender.lane == 0);
    CHECK(sender.micro_batch == node.micro_batch);
    ++checked;
  }
  CHECK(checked == 3);
  CHECK(g.contradicted == 0);
}

TEST_CASE("Each optimizer waits for the latest replica through one reduce group per stage: inputs stay linear in jobs") {
  SimRun run;
  run.dp = 8;
  run.steps = 1;
  run.worker_factor[{5, 2, 0}] = 1.3;  // replica 5's stage 2 ends last
  const Timeline t = Simulate(run);
  const GraphLanes lanes = MakeGraphLanes(t);
  REQUIRE(lanes.lanes.size() == 32);
  std::vector<std::vector<std::uint32_t>> indices(lanes.workers.size());
  std::vector<std::span<const std::uint32_t>> step_jobs;
  for (size_t w = 0; w < lanes.workers.size(); ++w) {
    for (std::uint32_t j = 0; j < lanes.workers[w]->jobs.size(); ++j) indices[w].push_back(j);
    step_jobs.emplace_back(indices[w]);
  }
  const StepGraph g = BuildStepGraph(lanes, step_jobs);
  CHECK(g.contradicted == 0);
  REQUIRE(g.groups.size() == 4);
  for (const ReduceGroup& group : g.groups) CHECK(group.senders == 8);
  // Hand-offs: 3 links x 2 directions x 8 micro-batches per replica; one input per optimizer.
  CHECK(g.inputs.size() == 8 * 3 * 2 * 8 + 32);
  size_t optimizers = 0;
  for (const StageJob& node : g.jobs) {
    if (node.pass != Pass::kOther) continue;
    ++optimizers;
    REQUIRE(node.inputs == 1);
    const GraphInput& in = g.inputs[node.first_input];
    CHECK(in.group >= 0);
    // The sender is the latest last pass of the stage's replicas (its own too).
    const int stage = lanes.lanes[node.lane].stage;
    Nanos latest = 0;
    for (const StageJob& other : g.jobs)
      if (other.pass != Pass::kOther && lanes.lanes[other.lane].stage == stage) latest = std::max(latest, other.end);
    CHECK(g.jobs[in.from].end == latest);
    if (stage == 2) CHECK(lanes.lanes[g.jobs[in.from].lane].replica == 5);
  }
  CHECK(optimizers == 32);
  // Replays run together: the one with nothing removed is the measured
  // step, and the one without hand-off latency beside it is shorter.
  ReplaySet set;
  set.count = 2;
  set.free_hand_offs[1] = true;
  ReplayScratch scratch;
  const auto replays = Replay(g, set, scratch);
  CHECK(replays[0].step_time == g.end - g.start);
  CHECK(replays[1].step_time < replays[0].step_time);
  CHECK(replays[0].busy == replays[1].busy);
}

TEST_CASE("A slow replica among eight: fixing it predicts the run without it") {
  SimRun slow, clean;
  slow.dp = clean.dp = 8;
  for (int s = 0; s < 4; ++s)
    for (int p = 0; p < 2; ++p) slow.worker_factor[{5, s, p}] = 1.3;
  CheckPrediction(slow, WhatIfKind::kNoSlowWorkers, clean);
}

// A run whose optimizers all wait for a global all-reduce (gradient-norm
// clipping): 8 stages, one pipeline, 400 us hand-offs.
SimRun BarrierRun() {
  SimRun run;
  run.pp = 8;
  run.mp = run.dp = 1;
  run.topology = false;
  run.barrier = true;
  run.latency = 400 * kUs;
  run.reduce_latency = 3000 * kUs;  // a slow collective: large enough to be noted
  return run;
}

TEST_CASE("A global all-reduce before the optimizers is modelled, not read as stall: free hand-offs predict the run without latency") {
  const SimRun run = BarrierRun();
  SimRun instant = run;
  instant.latency = 0;
  CheckPrediction(run, WhatIfKind::kFreeHandOffs, instant);
  const Analysis a = Run(run);
  const Bottleneck& b = a.bottleneck;
  CHECK(b.barrier_steps == b.steps);
  // The optimizers' wait is the all-reduce's, after the last backward anywhere; hardly any stall is left.
  CHECK(static_cast<double>(b.path.stall) < 0.02 * static_cast<double>(b.path.total()));
  CHECK(b.path.all_reduce == 3000 * kUs * static_cast<Nanos>(b.steps));
  for (const CriticalPathStep& step : b.critical_paths) {
    REQUIRE(step.jobs.size() >= 2);
    const CriticalJob& last = step.jobs.back();
    CHECK(last.type == "optimizer");
    CHECK(last.all_reduce == 3000 * kUs);
    CHECK(step.jobs[step.jobs.size() - 2].stage == 0);  // stage 0's last backward ends last in 1F1B
  }
  bool noted = false;
  for (const SummarySection& section : SummarySections(a, Simulate(run)))
    noted |= section.text.find("Note: the optimizers wait") == 0 && section.text.find("global all-reduce") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("Without a global all-reduce, an optimizer waiting for its replicas is no hand-off of a stage to itself") {
  SimRun run;
  run.dp = 4;
  run.reduce_latency = 100 * kUs;
  run.worker_factor[{2, 3, 0}] = 1.2;
  const Analysis a = Run(run);
  CHECK(a.bottleneck.barrier_steps == 0);
  for (const PathBreakdown::HandOff& h : a.bottleneck.path.hand_offs) CHECK(h.from != h.to);
}

TEST_CASE("Under a global all-reduce, one replica's slow stage: fixing its workers predicts the run without it") {
  SimRun slow;
  slow.pp = 4;
  slow.mp = 2;
  slow.dp = 2;
  slow.barrier = true;
  for (int p = 0; p < 2; ++p) slow.worker_factor[{1, 1, p}] = 1.2;
  SimRun clean = slow;
  clean.worker_factor.clear();
  CheckPrediction(slow, WhatIfKind::kNoSlowWorkers, clean);
}

TEST_CASE("Outlier jobs are named: worker, step, type and micro-batch; a slow worker is no outlier") {
  SimRun run;
  run.worker_factor[{1, 2, 0}] = 1.3;
  Timeline t = Simulate(run);
  Worker& w = t.machines[1].workers[1];  // rank 5: replica 0, stage 2, peer 1
  Job* backward = nullptr;
  for (Job& job : w.jobs)
    if (job.step == 2 && job.type == "backward" && job.micro_batch == 5) backward = &job;
  REQUIRE(backward);
  backward->end = backward->start + 3 * (backward->end - backward->start);
  const Analysis a = Analyze(t, 1);
  REQUIRE(a.bottleneck.outlier_count == 1);
  const OutlierJob& o = a.bottleneck.outliers.front();
  CHECK(o.worker == "machine1 worker 1");
  CHECK(o.step == 2);
  CHECK(o.type == "backward");
  CHECK(o.micro_batch == 5);
  CHECK(o.duration == backward->end - backward->start);
  const nlohmann::json doc = SummaryJson(a, t, {});
  CHECK(doc["outlier_jobs"]["count"] == 1);
  CHECK(doc["outlier_jobs"]["worst"][0]["micro_batch"] == 5);
}

TEST_CASE("Slow stages and slow workers are told apart; every worker has a speed against its peers") {
  SimRun stage;
  stage.stage_factor[1] = 1.25;
  const Analysis a = Run(stage);
  REQUIRE(a.bottleneck.slow_stages.size() == 1);
  CHECK(a.bottleneck.slow_stages[0].stage == 1);
  CHECK(a.bottleneck.slow_stages[0].factor == Approx(1.25).margin(0.03));
  CHECK(a.slow_workers.empty());
  CHECK(a.verdict.find("Stage 1 is 1.2") == 0);
  CHECK(a.verdict.find("of its layers to other stages") != std::string::npos);

  SimRun worker;
  worker.worker_factor[{0, 1, 1}] = 1.25;
  const Analysis b = Run(worker);
  CHECK(b.bottleneck.slow_stages.empty());  // its peer and the other replica run at the usual speed
  REQUIRE(b.bottleneck.speed.size() == 16);
  CHECK(b.bottleneck.speed[3] == Approx(1.25).margin(0.03));  // rank 3: replica 0, stage 1, peer 1
  for (size_t w = 0; w < 16; ++w)
    if (w != 3) CHECK(b.bottleneck.speed[w] == Approx(1.0).margin(0.03));
  const nlohmann::json doc = SummaryJson(b, Simulate(worker), {});
  CHECK(doc["workers"][3]["speed"].get<double>() == Approx(1.25).margin(0.03));
  std::string error;
  CHECK(ResolveMetric(doc, "workers.speed.max", &error) == Approx(1.25).margin(0.03));

  const Analysis clean = Run({});
  bool said = false;
  for (const SummarySection& section : SummarySections(clean, Simulate({})))
    said |= section.text.find("Slow workers: none: no worker is more than ") == 0;
  CHECK(said);
  CHECK(clean.verdict.find("Nothing here is worth fixing") == 0);
}

TEST_CASE("Times rounded to the microsecond are no contradiction: a hand-off a few microseconds early is used, and the replay still reproduces the step") {
  SimRun run;
  run.latency = 0;  // every receiver starts the instant its sender ends
  Timeline t = Simulate(run);
  const auto move_stage_1 = [&](Nanos by) {
    for (Machine& m : t.machines)
      for (Worker& w : m.workers)
        if (w.role.stage == 1)
          for (Job& job : w.jobs) {
            job.start += by;
            job.end += by;
          }
  };
  // Stage 1's times 2 us early, as rounding leaves them: its forwards now start before stage 0's end.
  move_stage_1(-2 * kUs);
  const Analysis a = Analyze(t, 1);
  CHECK(a.bottleneck.contradicted == 0);
  CHECK(a.bottleneck.overlaps == 0);
  CHECK(a.bottleneck.replay_error < 1e-9);
  // 10 us is no rounding: those hand-offs are left out and counted.
  move_stage_1(-8 * kUs);
  CHECK(Analyze(t, 1).bottleneck.contradicted > 0);
}

TEST_CASE("A what-if's replay drawn job by job adds up to what the what-if predicts") {
  SimRun slow;
  slow.stage_factor[2] = 1.5;
  const Timeline t = Simulate(slow);
  for (const WhatIfKind kind : {WhatIfKind::kBalancedStages, WhatIfKind::kNoStepGaps, WhatIfKind::kAll}) {
    INFO(WhatIfKey(kind));
    const Analysis a = Analyze(t, 2, {.draw = true, .kind = kind});
    const Bottleneck& b = a.bottleneck;
    REQUIRE(b.drawn_what_if);
    const WhatIfRun& run = *b.drawn_what_if;
    CHECK(run.kind == kind);
    const WhatIf& w = b.what_if[static_cast<size_t>(kind)];
    // The drawn run is the steps' replays one after the other, with the
    // measured time between steps unless the what-if removes it.
    const Nanos steps = static_cast<Nanos>(b.steps);
    const bool drop_gaps = kind != WhatIfKind::kBalancedStages;
    const Nanos predicted = w.step_time * steps + (drop_gaps ? 0 : b.step_gap * (steps - 1));
    CHECK(std::abs((run.end - run.start) - predicted) <= 2 * steps);  // the means are whole nanoseconds
    CHECK(run.start == b.critical_paths.front().start);  // the first step starts as measured
    // Every job of the run once, each worker's jobs one after the other.
    size_t drawn = 0, jobs = 0;
    size_t w_index = 0;
    for (const Machine& machine : t.machines)
      for (const Worker& worker : machine.workers) {
        jobs += worker.jobs.size();
        const auto& replayed = run.jobs[w_index++];
        drawn += replayed.size();
        for (size_t i = 1; i < replayed.size(); ++i) CHECK(replayed[i].start >= replayed[i - 1].end);
        for (const ReplayedJob& job : replayed) {
          CHECK(job.end - job.start >= 0);
          CHECK(job.start >= run.start);
          CHECK(job.end <= run.end);
        }
      }
    CHECK(drawn == jobs);
  }
  // Balanced stages: stage 2's jobs shorter than measured by the same factor, the others as measured.
  const Analysis a = Analyze(t, 2, {.draw = true, .kind = WhatIfKind::kBalancedStages});
  size_t w_index = 0, shorter = 0, same = 0;
  for (const Machine& machine : t.machines)
    for (const Worker& worker : machine.workers) {
      for (const ReplayedJob& job : a.bottleneck.drawn_what_if->jobs[w_index]) {
        const Job& measured = worker.jobs[job.job];
        const bool faster = job.end - job.start < measured.end - measured.start;
        if (worker.role.stage == 2 && measured.type != "optimizer") shorter += faster;
        else same += (job.end - job.start) == (measured.end - measured.start);
      }
      ++w_index;
    }
  CHECK(shorter > 0);
  CHECK(same > 0);
  // The top cause's by default; none without a cause or when not asked.
  const Analysis top = Analyze(t, 2, {.draw = true, .kind = std::nullopt});
  REQUIRE(top.bottleneck.drawn_what_if);
  CHECK(top.bottleneck.drawn_what_if->kind == top.bottleneck.causes.front().kind);
  CHECK_FALSE(Analyze(t, 2).bottleneck.drawn_what_if);
  CHECK_FALSE(Analyze(Simulate({}), 2, {.draw = true, .kind = std::nullopt}).bottleneck.drawn_what_if);
}

TEST_CASE("Two replicas, one replica's stage slower: only that side is slow; the faster one is no finding") {
  SimRun run;  // pp4 x mp2 x dp2
  for (int p = 0; p < 2; ++p) run.worker_factor[{1, 1, p}] = 1.2;
  const Analysis a = Run(run);
  REQUIRE(a.bottleneck.speed.size() == 16);
  for (const SlowWorker& w : a.slow_workers) {
    INFO(w.name << " " << w.factor);
    CHECK(w.role.replica == 1);
    CHECK(w.role.stage == 1);
  }
  CHECK(a.slow_workers.size() == 2);
  const std::vector<const Worker*> workers = AllWorkers(Simulate(run));
  for (size_t w = 0; w < 16; ++w) {
    INFO("worker " << w << ": speed " << a.bottleneck.speed[w]);
    CHECK(a.bottleneck.speed[w] >= 0.97);  // nobody reads as faster than its peers: the slow side is the finding
  }
}

}  // namespace unit_bottleneck_test
