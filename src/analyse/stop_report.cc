#include "analyse/stop_report.h"

#include <algorithm>
#include <map>
#include <set>

#include "analyse/global_barrier.h"
#include "analyse/schedule.h"
#include "analyse/stop_blame.h"
#include "analyse/stop_groups.h"
#include "analyse/step_graph.h"
#include "model/time_value.h"

namespace jobviz {

namespace {

using stop::Context;
using stop::Position;
using stop::GroupPasses;

// `first`: the run's first unfinished step; a worker that finished its own
// count of jobs there is placed there all the same (it may wait at the
// step's end for one that did not).
Position PositionOf(const Worker& worker, const WorkerStop& stop, std::int64_t first) {
  Position p;
  p.step = stop.step;
  // One with jobs there, or none at all (it died before its first job).
  if (p.step == kNoStep && first != kNoStep &&
      (worker.jobs.empty() ||
       std::any_of(worker.jobs.begin(), worker.jobs.end(), [&](const Job& job) { return job.step == first; })))
    p.step = first;
  if (p.step == kNoStep) return p;
  std::int64_t plan_step = kNoStep;
  for (const Job& job : worker.jobs) {
    if (job.step == p.step) p.done.push_back(&job);
    else if (job.step != kNoStep && job.step < p.step && StepRun(job.step) == StepRun(p.step))
      plan_step = std::max(plan_step, job.step);
  }
  for (const Job& job : worker.jobs)
    if (job.step == plan_step) p.plan.push_back(&job);
  if (!p.plan.empty()) p.before = p.plan.back();
  return p;
}

// A run that finished its last step, or, told it hung (--hung), stalled
// after it when nothing in the logs says it ended.
StopReport FinishedReport(const Timeline& timeline, StopOptions options, StopReport r) {
  r.kind = StopKind::kFinished;
  r.sentence = "The run finished its last step.";
  if (options.hung && !LogsSayRunEnded(timeline, timeline.steps.back().step)) {
    const std::int64_t last = StepNumber(timeline.steps.back().step);
    r.kind = StopKind::kBetweenSteps;
    r.step = timeline.steps.back().step;
    r.sentence = "Stalled between step " + std::to_string(last) + " and " + std::to_string(last + 1) +
                 ": every worker finished step " + std::to_string(last) +
                 " and nothing in the logs says the run ended (a data loader, a checkpoint, an evaluation?).";
  }
  return r;
}

// Behind: an earlier step, or fewer jobs of the same one.
bool Behind(const Position& a, const Position& b) {
  if (a.step == kNoStep) return false;
  if (b.step == kNoStep) return true;
  return a.step != b.step ? a.step < b.step : a.done.size() < b.done.size();
}

}  // namespace

StopReport ReportStop(const Timeline& timeline, const UnfinishedSteps& unfinished, StopOptions options) {
  StopReport early;
  early.unfinished_steps = unfinished.steps;
  early.unfinished_jobs = unfinished.jobs;
  early.step = unfinished.first;
  early.run_start = RunStart(timeline);  // as every report counts from it
  const std::vector<const Worker*> workers = AllWorkers(timeline);  // in GraphLanes::workers' order
  EndWorkers(workers, unfinished.last_job_ends, &early);
  const bool any_job = std::any_of(workers.begin(), workers.end(), [](const Worker* w) { return !w->jobs.empty(); });
  if (timeline.steps.empty() || !any_job) return early;
  if (unfinished.first == kNoStep) return FinishedReport(timeline, options, std::move(early));
  // The run stopped: its lanes, built only now (at 131,072 GPUs a tenth of a
  // second that a finished run does not need).
  Context c(timeline);
  c.report = std::move(early);
  StopReport& r = c.report;
  c.positions.resize(c.graph.workers.size());
  for (size_t w = 0; w < c.graph.workers.size(); ++w) {
    const WorkerStop stop = w < unfinished.workers.size() ? unfinished.workers[w] : WorkerStop{};
    c.positions[w] = PositionOf(*c.graph.workers[w], stop, unfinished.first);
    for (const Job* job : c.positions[w].plan) c.max_chunk = std::max(c.max_chunk, ClassifyJobType(job->type.str()).chunk);
  }
  r.barrier = OptimizersJoinGlobalBarrier(c.timeline, c.graph);
  if (std::none_of(c.positions.begin(), c.positions.end(), [](const Position& p) { return !p.plan.empty(); }))
    LearnFirstStepOrder(c);
  r.lanes.resize(c.graph.lanes.size());
  for (size_t l = 0; l < c.graph.lanes.size(); ++l) {
    const StageLane& lane = c.graph.lanes[l];
    LaneStop& out = r.lanes[l];
    out.replica = lane.replica;
    out.stage = lane.stage;
    out.workers = lane.workers;
    // The peer that fell behind first speaks for the lane.
    std::stable_sort(out.workers.begin(), out.workers.end(), [&](std::uint32_t a, std::uint32_t b) {
      return Behind(c.positions[a], c.positions[b]);
    });
  }
  // A first step shows nothing of whether the all-reduce is global, until a
  // stage came out of its all-reduce (while another had not).
  r.all_reduce_global = r.barrier || EveryStageAtClosing(c) ||
                        (std::none_of(timeline.steps.begin(), timeline.steps.end(),
                                      [](const StepSpan& s) { return !s.unfinished; }) &&
                         !SomeStageClosed(c));
  for (size_t l = 0; l < r.lanes.size(); ++l)
    if (!r.lanes[l].workers.empty()) PlaceLane(c, l);
  BlameStop(timeline, c.graph, options, &r);
  return r;
}

int WaitChainEnd(const StopReport& r, int lane) {
  if (r.lanes[static_cast<size_t>(lane)].state != LaneState::kWaiting) return lane;
  int at = r.lanes[static_cast<size_t>(lane)].waits_on;
  for (size_t hops = 0; at >= 0 && r.lanes[at].state == LaneState::kWaiting && hops < r.lanes.size(); ++hops)
    at = r.lanes[at].waits_on;
  return at;
}

StopReport RunningReport(std::int64_t step) {
  StopReport r;
  r.kind = StopKind::kRunning;
  r.step = step;
  r.sentence = "Running: " + StepName(step) + " in progress (jobviz follow; no stall).";
  return r;
}

const char* StopKindKey(StopKind kind) {
  switch (kind) {
    case StopKind::kUnknown: return "unknown";
    case StopKind::kFinished: return "finished";
    case StopKind::kStopped: return "stopped";
    case StopKind::kSuspect: return "suspect";
    case StopKind::kAllReduce: return "all_reduce";
    case StopKind::kCutTogether: return "cut_together";
    case StopKind::kRunning: return "running";
    case StopKind::kBetweenSteps: return "between_steps";
  }
  return "unknown";
}

const char* LaneStateKey(LaneState state) {
  switch (state) {
    case LaneState::kFinished: return "finished";
    case LaneState::kWaiting: return "waiting";
    case LaneState::kStuck: return "stuck";
    case LaneState::kInAllReduce: return "in_all_reduce";
    case LaneState::kUnknown: return "unknown";
  }
  return "unknown";
}

}  // namespace jobviz
