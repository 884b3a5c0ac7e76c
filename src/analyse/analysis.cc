#include "analyse/analysis.h"

#include "model/time_value.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
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
std::vector<StepWindow> StepWindows(const Timeline& timeline) {
  std::map<std::int64_t, StepWindow> windows;
  bool any_step = false;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers)
      for (const Job& job : worker.jobs) any_step |= job.step != kNoStep;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers)
      for (const Job& job : worker.jobs) {
        if (any_step && job.step == kNoStep) continue;
        const std::int64_t step = any_step ? job.step : kNoStep;
        auto [it, inserted] = windows.try_emplace(step, StepWindow{step, job.start, job.end});
        it->second.start = std::min(it->second.start, job.start);
        it->second.end = std::max(it->second.end, job.end);
      }
  if (any_step)
    for (const StepSpan& span : timeline.steps)
      if (auto it = windows.find(span.step); it != windows.end()) it->second = {span.step, span.start, span.end};
  std::vector<StepWindow> out;
  for (const auto& [step, window] : windows) out.push_back(window);
  return out;
}

// Busy and idle time of one worker in every step window.
WorkerAnalysis AnalyzeWorker(const Machine& machine, const Worker& worker, const std::vector<StepWindow>& steps,
                             bool by_step) {
  WorkerAnalysis w;
  w.machine = worker.machine;
  w.worker = worker.index;
  w.name = machine.name + " worker " + std::to_string(worker.index);
  // The worker's job intervals by step, in one pass.
  std::map<std::int64_t, std::vector<std::pair<Nanos, Nanos>>> by_step_intervals;
  for (const Job& job : worker.jobs) by_step_intervals[by_step ? job.step : kNoStep].emplace_back(job.start, job.end);
  for (const StepWindow& window : steps) {
    auto it = by_step_intervals.find(window.step);
    std::vector<std::pair<Nanos, Nanos>> inside;  // a job reaching before a clipped step counts from its start
    if (it != by_step_intervals.end())
      for (const auto& [start, end] : it->second) inside.emplace_back(std::max(start, window.start), std::min(end, window.end));
    WorkerStep ws{window.step, UnionLength(std::move(inside)), 0};
    ws.idle = SaturatingSub(window.duration(), ws.busy);
    w.busy = SaturatingAdd(w.busy, ws.busy);
    w.idle = SaturatingAdd(w.idle, ws.idle);
    w.windows = SaturatingAdd(w.windows, window.duration());
    w.steps.push_back(ws);
  }
  w.bubble_ratio = w.windows > 0 ? static_cast<double>(w.idle) / static_cast<double>(w.windows) : 0;
  return w;
}

std::map<std::string, TypeAnalysis> JobTypes(const Timeline& timeline) {
  std::unordered_map<std::uint32_t, std::pair<Name, std::vector<Nanos>>> durations;  // by Name::index()
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers)
      for (const Job& job : worker.jobs) {
        auto& [type, values] = durations[job.type.index()];
        type = job.type;
        values.push_back(job.end - job.start);
      }
  std::map<std::string, TypeAnalysis> types;
  for (auto& [index, entry] : durations) {
    auto& [type, values] = entry;
    TypeAnalysis t;
    t.count = values.size();
    for (Nanos v : values) t.total = SaturatingAdd(t.total, v);
    t.mean = t.total / static_cast<Nanos>(t.count);
    t.p50 = PercentileOf(values, 50);
    t.p95 = PercentileOf(values, 95);
    types[type.str()] = t;
  }
  return types;
}

// Stages: workers with jobs. Micro-batches: distinct forward micro-batch
// ids per step on a worker, the most seen.
void CountStagesAndMicroBatches(const Timeline& timeline, Analysis* a) {
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) {
      if (worker.jobs.empty()) continue;
      ++a->stages;
      std::map<std::int64_t, std::set<std::int64_t>> per_step;
      for (const Job& job : worker.jobs)
        if (job.type.str().starts_with("forward")) per_step[job.step].insert(job.micro_batch);
      for (const auto& [step, ids] : per_step) a->micro_batches = std::max(a->micro_batches, static_cast<int>(ids.size()));
    }
}

// Per step, the worker whose last job ended latest, and how far behind the
// median worker it was.
std::vector<Straggler> Stragglers(const Timeline& timeline, const std::vector<StepWindow>& steps) {
  // Each worker's last job end per step, in one pass over its jobs.
  std::map<std::int64_t, std::vector<std::pair<Nanos, const Worker*>>> ends_by_step;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) {
      std::map<std::int64_t, Nanos> last;
      for (const Job& job : worker.jobs)
        if (job.step != kNoStep) {
          auto [it, inserted] = last.try_emplace(job.step, job.end);
          it->second = std::max(it->second, job.end);
        }
      for (const auto& [step, end] : last) ends_by_step[step].emplace_back(end, &worker);
    }
  std::vector<Straggler> stragglers;
  for (const StepWindow& window : steps) {
    std::vector<std::pair<Nanos, const Worker*>>& last_ends = ends_by_step[window.step];
    if (last_ends.size() < 2) continue;
    std::sort(last_ends.begin(), last_ends.end(),
              [](const auto& x, const auto& y) { return x.first != y.first ? x.first < y.first : x.second->index < y.second->index; });
    std::vector<Nanos> ends;
    for (const auto& [end, worker] : last_ends) ends.push_back(end);
    const Worker& latest = *last_ends.back().second;
    stragglers.push_back({window.step, latest.machine, latest.index,
                          timeline.machines[latest.machine].name + " worker " + std::to_string(latest.index),
                          last_ends.back().first - Percentile(ends, 50)});
  }
  return stragglers;
}

}  // namespace

Analysis Analyze(const Timeline& timeline) {
  Analysis a;
  a.steps = StepWindows(timeline);
  const bool by_step = !a.steps.empty() && a.steps.front().step != kNoStep;
  Nanos all_idle = 0, all_windows = 0;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) {
      a.workers.push_back(AnalyzeWorker(machine, worker, a.steps, by_step));
      all_idle = SaturatingAdd(all_idle, a.workers.back().idle);
      all_windows = SaturatingAdd(all_windows, a.workers.back().windows);
    }
  a.bubble_ratio = all_windows > 0 ? static_cast<double>(all_idle) / static_cast<double>(all_windows) : 0;
  a.job_types = JobTypes(timeline);
  CountStagesAndMicroBatches(timeline, &a);
  a.schedule = RecogniseSchedule(timeline, a.stages, a.micro_batches, a.job_types);
  if (by_step) a.stragglers = Stragglers(timeline, a.steps);
  return a;
}

}  // namespace jobviz
