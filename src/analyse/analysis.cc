#include "analyse/analysis.h"

#include "analyse/cause_text.h"

#include "align/pipeline_order.h"
#include "model/unfinished_steps.h"
#include "model/time_value.h"
#include "read/parallel_for.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <unordered_map>

namespace jobviz {

std::vector<std::pair<Nanos, Nanos>> MergeIntervals(std::vector<std::pair<Nanos, Nanos>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<std::pair<Nanos, Nanos>> merged;
  for (const auto& [start, end] : intervals) {
    if (end <= start) continue;
    if (!merged.empty() && start <= merged.back().second) merged.back().second = std::max(merged.back().second, end);
    else merged.emplace_back(start, end);
  }
  return merged;
}

Nanos UnionLength(std::vector<std::pair<Nanos, Nanos>> intervals) {
  Nanos total = 0;
  for (const auto& [start, end] : MergeIntervals(std::move(intervals))) total += end - start;
  return total;
}

namespace {

// One window per step that has jobs: the step finder's span, the one the
// traces draw (NVTX: push to pop or last job; job order: clipped so steps do
// not overlap), so the summary and the viewer agree. A step without a span
// (none here, but the model allows it) spans its jobs. One window over
// everything when no job has a step.
std::vector<StepWindow> StepWindows(const std::vector<const Worker*>& workers, const Timeline& timeline,
                                    int threads) {
  // Each worker's windows on its own thread (its jobs are by start, so a
  // step's jobs mostly follow each other: the last window found is tried
  // first), then merged.
  const bool any_step = std::any_of(workers.begin(), workers.end(), [](const Worker* worker) {
    return std::any_of(worker->jobs.begin(), worker->jobs.end(), [](const Job& job) { return job.step != kNoStep; });
  });
  // Per worker a vector by step (WidenStepSpan), not a map.
  std::vector<std::vector<StepWindow>> per_worker(workers.size());
  ParallelFor(workers.size(), threads, [&](size_t w) {
    size_t last = 0;
    for (const Job& job : workers[w]->jobs)
      if (!any_step || job.step != kNoStep)
        WidenStepSpan(per_worker[w], 0, last, any_step ? job.step : kNoStep, job.start, job.end);
  });
  std::map<std::int64_t, StepWindow> windows;
  for (const auto& worker_windows : per_worker)
    for (const StepWindow& window : worker_windows) {
      auto [it, inserted] = windows.try_emplace(window.step, window);
      it->second.start = std::min(it->second.start, window.start);
      it->second.end = std::max(it->second.end, window.end);
    }
  if (any_step)
    for (const StepSpan& span : timeline.steps)
      if (auto it = windows.find(span.step); it != windows.end()) it->second = {span.step, span.start, span.end};
  // The steps the run did not finish are drawn, not measured: their jobs
  // fall in no window (docs/analysis.md, "Where the run stopped").
  const UnfinishedStepSet unfinished(timeline);
  std::vector<StepWindow> out;
  for (const auto& [step, window] : windows)
    if (!unfinished.Contains(step)) out.push_back(window);
  return out;
}

// Busy and idle time of one worker in every step window. Busy is the union
// of the worker's jobs of that step, each clipped to the window: the jobs
// are in start order and so are their clipped starts, so one sweep keeps a
// running interval per window (no job list per step, no sort).
WorkerAnalysis AnalyzeWorker(const Machine& machine, const Worker& worker, const std::vector<StepWindow>& steps,
                             bool by_step) {
  WorkerAnalysis w;
  w.machine = worker.machine;
  w.worker = worker.index;
  w.name = WorkerName(machine, worker);
  w.role = worker.role;
  struct Sweep {
    Nanos busy = 0, start = 0, end = 0;
    bool open = false;
  };
  std::vector<Sweep> sweeps(steps.size());
  size_t at = 0;  // the window of the last job: a step's jobs mostly follow each other
  for (const Job& job : worker.jobs) {
    const std::int64_t step = by_step ? job.step : kNoStep;
    if (at >= steps.size() || steps[at].step != step) {  // the windows are in step order
      const auto it = std::lower_bound(steps.begin(), steps.end(), step,
                                       [](const StepWindow& window, std::int64_t s) { return window.step < s; });
      if (it == steps.end() || it->step != step) continue;  // a step the run did not finish
      at = static_cast<size_t>(it - steps.begin());
    }
    const Nanos start = std::max(job.start, steps[at].start), end = std::min(job.end, steps[at].end);
    if (end <= start) continue;
    Sweep& sweep = sweeps[at];
    if (sweep.open && start <= sweep.end) {
      sweep.end = std::max(sweep.end, end);
      continue;
    }
    if (sweep.open) sweep.busy = SaturatingAdd(sweep.busy, sweep.end - sweep.start);
    sweep = {sweep.busy, start, end, true};
  }
  w.steps.reserve(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepWindow& window = steps[i];
    const Sweep& sweep = sweeps[i];
    WorkerStep ws{window.step, sweep.open ? SaturatingAdd(sweep.busy, sweep.end - sweep.start) : sweep.busy, 0};
    ws.idle = SaturatingSub(window.duration(), ws.busy);
    w.busy = SaturatingAdd(w.busy, ws.busy);
    w.idle = SaturatingAdd(w.idle, ws.idle);
    w.windows = SaturatingAdd(w.windows, window.duration());
    w.steps.push_back(ws);
  }
  w.bubble_ratio = w.windows > 0 ? static_cast<double>(w.idle) / static_cast<double>(w.windows) : 0;
  return w;
}

std::map<std::string, TypeAnalysis> JobTypes(const std::vector<const Worker*>& workers,
                                             const UnfinishedStepSet& unfinished, int threads) {
  std::unordered_map<std::uint32_t, size_t> slot;  // Name::index() -> entry
  std::vector<std::pair<Name, std::vector<Nanos>>> durations;
  for (const Worker* worker : workers)
    for (const Job& job : worker->jobs) {
      if (unfinished.Contains(job.step)) continue;
      const auto [it, inserted] = slot.try_emplace(job.type.index(), durations.size());
      if (inserted) durations.emplace_back(job.type, std::vector<Nanos>());
      durations[it->second].second.push_back(job.end - job.start);
    }
  std::vector<TypeAnalysis> stats(durations.size());
  ParallelFor(durations.size(), threads, [&](size_t i) {  // the percentiles, a type per thread
    std::vector<Nanos>& values = durations[i].second;
    TypeAnalysis& t = stats[i];
    t.count = values.size();
    for (Nanos v : values) t.total = SaturatingAdd(t.total, v);
    t.mean = t.total / static_cast<Nanos>(t.count);
    std::tie(t.p50, t.p95) = PercentilesOf(values, 50, 95);
  });
  std::map<std::string, TypeAnalysis> types;
  for (size_t i = 0; i < durations.size(); ++i) types[durations[i].first.str()] = stats[i];
  return types;
}

// Stages: the stages with jobs of the longest pipeline (without a topology,
// the workers with jobs). Micro-batches: distinct forward micro-batch ids per
// step on a worker, the most seen (forward as the hand-offs read it,
// DirectionOf).
void CountStagesAndMicroBatches(const Timeline& timeline, const std::vector<const Worker*>& workers, int threads,
                                Analysis* a) {
  std::vector<int> most(workers.size(), 0);
  ParallelFor(workers.size(), threads, [&](size_t w) {
    DirectionsByType directions;
    std::vector<std::pair<std::int64_t, std::int64_t>> step_and_id;
    step_and_id.reserve(workers[w]->jobs.size());
    for (const Job& job : workers[w]->jobs)
      if (directions.Of(job.type) == Direction::kForward) step_and_id.emplace_back(job.step, job.micro_batch);
    std::sort(step_and_id.begin(), step_and_id.end());
    step_and_id.erase(std::unique(step_and_id.begin(), step_and_id.end()), step_and_id.end());
    for (size_t i = 0; i < step_and_id.size();) {
      size_t j = i;
      while (j < step_and_id.size() && step_and_id[j].first == step_and_id[i].first) ++j;
      most[w] = std::max(most[w], static_cast<int>(j - i));
      i = j;
    }
  });
  for (size_t w = 0; w < workers.size(); ++w) {
    if (workers[w]->jobs.empty()) continue;
    a->micro_batches = std::max(a->micro_batches, most[w]);
  }
  for (const PipelineChain& chain : PipelineChains(timeline)) {
    int stages = 0;
    for (const auto& [machine, worker] : chain.stages) stages += !worker->jobs.empty();
    a->stages = std::max(a->stages, stages);
  }
}

}  // namespace

std::vector<StepWindow> StepWindowsOf(const Timeline& timeline, int threads) {
  return StepWindows(AllWorkers(timeline), timeline, threads);
}

Analysis Analyze(const Timeline& timeline, int threads, const WhatIfDrawing& drawing) {
  std::vector<const Worker*> workers;
  std::vector<const Machine*> machine_of;  // each worker's machine
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) {
      workers.push_back(&worker);
      machine_of.push_back(&machine);
    }
  Analysis a;
  a.steps = StepWindows(workers, timeline, threads);
  const bool by_step = !a.steps.empty() && a.steps.front().step != kNoStep;
  a.workers.resize(workers.size());
  ParallelFor(workers.size(), threads, [&](size_t w) {
    a.workers[w] = AnalyzeWorker(*machine_of[w], *workers[w], a.steps, by_step);
  });
  Nanos all_idle = 0, all_windows = 0;
  for (const WorkerAnalysis& worker : a.workers) {
    all_idle = SaturatingAdd(all_idle, worker.idle);
    all_windows = SaturatingAdd(all_windows, worker.windows);
  }
  a.bubble_ratio = all_windows > 0 ? static_cast<double>(all_idle) / static_cast<double>(all_windows) : 0;
  a.job_types = JobTypes(workers, UnfinishedStepSet(timeline), threads);
  CountStagesAndMicroBatches(timeline, workers, threads, &a);
  a.schedule = RecogniseSchedule(timeline, a.stages, a.micro_batches, a.job_types, threads);
  a.bottleneck = AnalyzeBottleneck(timeline, a.steps, threads, &a.slow_workers, drawing);
  const double* ideal = a.schedule.ideal_bubble ? &*a.schedule.ideal_bubble : nullptr;
  a.verdict = PlainVerdict(a.bottleneck, {a.bottleneck.slowest_stage, a.bottleneck.slowest_stage_factor, &a.slow_workers},
                           a.bubble_ratio, ideal);
  a.topology = timeline.topology;
  if (timeline.topology.hybrid()) {
    a.stage_table = AnalyzeStages(timeline, a.workers, threads);
    a.lagging_peers = FindLaggingPeers(timeline, threads);
    if (by_step) a.last_replicas = FindLastReplicas(timeline, a.steps, threads);
  }
  return a;
}

}  // namespace jobviz
