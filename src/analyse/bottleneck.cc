#include "analyse/bottleneck.h"

#include "model/unfinished_steps.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>

#include "analyse/analysis.h"
#include "analyse/cause_text.h"
#include "analyse/step_graph.h"
#include "analyse/step_walks.h"
#include "analyse/speeds.h"
#include "analyse/step_jobs.h"
#include "read/parallel_for.h"

namespace jobviz {

double SpeedOf(const Bottleneck& b, size_t worker) { return worker < b.speed.size() ? b.speed[worker] : 0; }

// A step of `step` plus its share of the gaps between steps.
static double WallPerStep(const Bottleneck& b, Nanos step) {
  return static_cast<double>(step * static_cast<Nanos>(b.steps) + b.path.step_gaps) / static_cast<double>(b.steps);
}

double MeasuredWallPerStep(const Bottleneck& b) { return b.steps == 0 ? 0 : WallPerStep(b, b.measured_step); }

double PredictedWallPerStep(const Bottleneck& b, WhatIfKind kind) {
  if (b.steps == 0 || static_cast<size_t>(kind) >= b.what_if.size()) return 0;
  return WallPerStep(b, b.replayed_step) - static_cast<double>(b.what_if[static_cast<size_t>(kind)].saved);
}

bool OnCriticalPath(const Bottleneck& b, size_t worker, std::uint32_t job) {
  if (worker >= b.marks.size()) return false;
  return std::binary_search(b.marks[worker].begin(), b.marks[worker].end(), job);
}

namespace {

constexpr size_t kWhatIfs = static_cast<size_t>(WhatIfKind::kCount);

// One step's graph, critical path and replays.
struct StepResult {
  bool empty = true;
  Nanos start = 0, end = 0, replayed = 0;
  std::array<Nanos, kWhatIfs> step_time{}, busy{};
  Nanos measured_busy = 0;
  size_t graph_workers = 0, contradicted = 0, overlaps = 0;
  bool barrier = false;
  StepPath path;
};

// What one thread keeps from step to step (StepGraphRoom says why).
struct StepWork {
  std::vector<std::span<const std::uint32_t>> step_jobs;
  StepGraph graph;
  StepGraphRoom room;
  std::vector<Nanos> durations;  // per job, kReplays each
  ReplayScratch scratch;
};

// Steps [0, windows) handed out one at a time to threads that each keep
// their StepWork: `step(k, work)`.
template <class StepFn>
void ForEachStep(size_t windows, int threads, const StepFn& step) {
  std::atomic<size_t> next_step{0};
  const int thread_count = static_cast<int>(std::min<size_t>(static_cast<size_t>(ThreadCount(threads)), windows));
  ParallelFor(static_cast<size_t>(thread_count), thread_count, [&](size_t) {
    StepWork work;
    for (size_t k = next_step++; k < windows; k = next_step++) step(k, work);
  });
}

// The graph of step `window` into work.graph.
const StepGraph& BuildWindowGraph(const GraphLanes& lanes, const std::vector<StepJobs>& by_window,
                                  std::span<const std::uint32_t> counting, size_t window, bool for_replays, StepWork& work) {
  work.step_jobs.assign(lanes.workers.size(), {});
  for (size_t w = 0; w < lanes.workers.size(); ++w)
    if (lanes.lane_of[w] >= 0) work.step_jobs[w] = by_window[w].Of(window, counting);
  BuildStepGraph(lanes, work.step_jobs, for_replays, &work.graph, &work.room);
  return work.graph;
}

// Whether a what-if's run leaves out the time between steps.
bool DropsStepGaps(WhatIfKind kind) { return kind == WhatIfKind::kNoStepGaps || kind == WhatIfKind::kAll; }

// One replay per what-if, all in one pass (slot = WhatIfKind); the one
// without step gaps replays the steps as measured, the nominal replay. (A
// change that changes nothing replays as measured: balanced stages without
// a slower stage, slow workers without one.) `durations` is their room.
constexpr size_t Slot(WhatIfKind kind) { return static_cast<size_t>(kind); }
ReplaySet WhatIfReplays(const StepGraph& g, const GraphLanes& lanes, const Speeds& speeds, std::vector<Nanos>& durations) {
  static_assert(kWhatIfs <= kReplays);
  const size_t n = g.jobs.size();
  durations.resize(n * kReplays);
  for (size_t i = 0; i < n; ++i) {
    const StageJob& node = g.jobs[i];
    const Nanos measured = node.end - node.start;
    const Speeds::TypeSpeed* type = speeds.Of(node.lane, node.type.index());
    const double balance = type ? type->balance : 1;
    const auto balanced = [&](Nanos d) { return balance == 1 ? d : static_cast<Nanos>(std::llround(static_cast<double>(d) * balance)); };
    const Nanos median = speeds.outlier_count > 0 ? WithoutOutliers(g, node, lanes, speeds) : measured;  // a lookup per peer: only when there is something to find
    const Nanos fixed = speeds.any_slow ? FixedDuration(g, node, lanes, speeds) : measured;
    Nanos* const row = &durations[i * kReplays];
    std::fill_n(row, kReplays, measured);
    row[Slot(WhatIfKind::kBalancedStages)] = balanced(measured);
    row[Slot(WhatIfKind::kNoOutliers)] = median;
    row[Slot(WhatIfKind::kNoSlowWorkers)] = fixed;
    row[Slot(WhatIfKind::kAll)] = balanced(std::min(median, fixed));
  }
  ReplaySet set;
  set.count = kWhatIfs;
  set.durations = durations;
  set.free_hand_offs[Slot(WhatIfKind::kFreeHandOffs)] = set.free_hand_offs[Slot(WhatIfKind::kAll)] = true;
  set.no_stall[Slot(WhatIfKind::kNoStall)] = set.no_stall[Slot(WhatIfKind::kAll)] = true;
  return set;
}

StepResult AnalyzeStep(const GraphLanes& lanes, const std::vector<StepJobs>& by_window,
                       std::span<const std::uint32_t> counting, size_t window, const Speeds* speeds_or_null,
                       std::int64_t step, StepWork& work) {
  StepResult r;
  const StepGraph& g = BuildWindowGraph(lanes, by_window, counting, window, speeds_or_null != nullptr, work);
  if (g.jobs.empty()) return r;
  r.empty = false;
  r.start = g.start;
  r.end = g.end;
  r.graph_workers = g.graph_workers;
  r.contradicted = g.contradicted;
  r.overlaps = g.overlaps;
  r.barrier = g.global_barrier;
  r.path = WalkCriticalPath(g, lanes, step);
  if (!speeds_or_null) return r;  // the critical path only (the traces)
  const std::array<ReplayResult, kReplays> replays = Replay(g, WhatIfReplays(g, lanes, *speeds_or_null, work.durations), work.scratch);
  const ReplayResult& nominal = replays[Slot(WhatIfKind::kNoStepGaps)];
  r.replayed = nominal.step_time;
  r.measured_busy = nominal.busy;
  for (size_t k = 0; k < kWhatIfs; ++k) {
    r.step_time[k] = replays[k].step_time;
    r.busy[k] = replays[k].busy;
  }
  return r;
}

// One step's replay of one what-if, every peer's job at its lane job's replayed times.
struct ReplayedStep {
  Nanos start = 0, measured_end = 0, end = 0;  // the step's first start, its measured and replayed last end
  std::vector<std::pair<std::uint32_t, ReplayedJob>> jobs;  // (GraphLanes::workers index, job)
};

ReplayedStep ReplayStep(const GraphLanes& lanes, const std::vector<StepJobs>& by_window, std::span<const std::uint32_t> counting,
                        size_t window, const Speeds& speeds, WhatIfKind kind, StepWork& work) {
  ReplayedStep r;
  const StepGraph& g = BuildWindowGraph(lanes, by_window, counting, window, true, work);
  if (g.jobs.empty()) return r;
  const std::array<ReplayResult, kReplays> replays = Replay(g, WhatIfReplays(g, lanes, speeds, work.durations), work.scratch);
  const size_t k = Slot(kind);
  r.start = g.start;
  r.measured_end = g.end;
  r.end = g.start + replays[k].step_time;
  for (size_t i = 0; i < g.jobs.size(); ++i) {
    const Nanos end = work.scratch.end[i * kReplays + k];  // Replay: ready + stall + duration
    const Nanos start = end - work.durations[i * kReplays + k];
    const StageJob& node = g.jobs[i];
    for (std::uint32_t m = 0; m < node.members; ++m) {
      const MemberJob& member = g.members[node.first_member + m];
      r.jobs.push_back({member.worker, {member.job, start, end}});
    }
  }
  return r;
}

// What-if `kind` replayed step by step (a second pass: which what-if is the
// top cause is known only once every step is replayed), the steps chained
// as WhatIfRun says.
WhatIfRun DrawWhatIf(const GraphLanes& lanes, const std::vector<StepJobs>& by_window, std::span<const std::uint32_t> counting,
                     size_t windows, const Speeds& speeds, WhatIfKind kind, int threads) {
  std::vector<ReplayedStep> steps(windows);
  ForEachStep(windows, threads, [&](size_t k, StepWork& work) { steps[k] = ReplayStep(lanes, by_window, counting, k, speeds, kind, work); });
  WhatIfRun run;
  run.kind = kind;
  run.jobs.resize(lanes.workers.size());
  const bool drop_gaps = DropsStepGaps(kind);
  const ReplayedStep* previous = nullptr;
  for (const ReplayedStep& step : steps) {
    if (step.jobs.empty()) continue;
    Nanos shift = 0;  // where the step's replay goes: after the one before, and the gap between them
    if (previous)
      shift = run.end + (drop_gaps ? 0 : std::max<Nanos>(0, step.start - previous->measured_end)) - step.start;
    else
      run.start = step.start;
    for (const auto& [worker, job] : step.jobs) run.jobs[worker].push_back({job.job, job.start + shift, job.end + shift});
    run.end = step.end + shift;
    previous = &step;
  }
  for (auto& jobs : run.jobs)
    std::stable_sort(jobs.begin(), jobs.end(), [](const ReplayedJob& a, const ReplayedJob& b) { return a.start < b.start; });
  return run;
}

// With `slow_workers` null, the critical paths only: no speeds, no replays.
Bottleneck Bottlenecks(const Timeline& timeline, const std::vector<StepWindow>& steps, int threads,
                       std::vector<SlowWorker>* slow_workers, const WhatIfDrawing& drawing = {}) {
  Bottleneck b;
  const GraphLanes lanes = MakeGraphLanes(timeline);
  b.marks.resize(lanes.workers.size());
  if (steps.empty()) return b;
  const bool by_step = steps.front().step != kNoStep;
  std::vector<StepJobs> by_window(lanes.workers.size());
  ParallelFor(lanes.workers.size(), threads, [&](size_t w) {
    if (lanes.lane_of[w] >= 0) by_window[w] = GroupByWindow(*lanes.workers[w], steps, by_step);
  });
  size_t most_jobs = 0;
  for (const Worker* worker : lanes.workers) most_jobs = std::max(most_jobs, worker->jobs.size());
  std::vector<std::uint32_t> counting(most_jobs);
  std::iota(counting.begin(), counting.end(), 0u);
  bool peers_or_replicas = false;
  for (size_t l = 0; l < lanes.lanes.size(); ++l)
    peers_or_replicas |= lanes.lanes[l].workers.size() > 1 || lanes.HasOtherReplicas(static_cast<int>(l));
  b.per_worker_only = !peers_or_replicas;
  Speeds speeds = slow_workers ? MeasureSpeeds(timeline, lanes, threads, slow_workers) : Speeds();
  if (slow_workers) {
    speeds.any_slow = !slow_workers->empty();
    b.slow_stages = std::move(speeds.slow_stages);
    b.outlier_count = speeds.outlier_count;  // kept: the replays read it
    b.speed = std::move(speeds.speed);
    b.outliers = std::move(speeds.outliers);
    AddLaneTypes(lanes, &speeds);
  }
  std::vector<StepResult> results(steps.size());
  ForEachStep(steps.size(), threads, [&](size_t k, StepWork& work) {
    results[k] = AnalyzeStep(lanes, by_window, counting, k, slow_workers ? &speeds : nullptr, steps[k].step, work);
  });
  // Sums over the steps; the gaps between consecutive steps with jobs.
  Nanos measured = 0, replayed = 0, gaps = 0, measured_busy = 0, windows = 0;
  std::array<Nanos, kWhatIfs> predicted{}, busy{};
  std::array<Nanos, kWhatIfs> predicted_windows{};
  std::map<std::pair<int, std::string>, Nanos> compute;
  std::map<std::pair<int, int>, Nanos> hand_offs;
  const StepResult* previous = nullptr;
  for (StepResult& r : results) {
    if (r.empty) continue;
    ++b.steps;
    if (previous) gaps += std::max<Nanos>(0, r.start - previous->end);
    previous = &r;
    measured += r.end - r.start;
    replayed += r.replayed;
    measured_busy += r.measured_busy;
    windows += r.replayed * static_cast<Nanos>(r.graph_workers);
    if (r.end > r.start)
      b.replay_error = std::max(b.replay_error, std::abs(static_cast<double>(r.replayed - (r.end - r.start))) /
                                                    static_cast<double>(r.end - r.start));
    b.contradicted += r.contradicted;
    b.overlaps += r.overlaps;
    for (size_t k = 0; k < kWhatIfs; ++k) {
      predicted[k] += r.step_time[k];
      busy[k] += r.busy[k];
      predicted_windows[k] += r.step_time[k] * static_cast<Nanos>(r.graph_workers);
    }
    for (const auto& c : r.path.compute) compute[{c.stage, c.type}] += c.time;
    for (const auto& h : r.path.hand_offs) hand_offs[{h.from, h.to}] += h.time;
    b.path.all_reduce += r.path.all_reduce;
    b.path.stall += r.path.stall;
    b.path.step_start += r.path.step_start;
    b.barrier_steps += r.barrier;
    for (const MemberJob& mark : r.path.marks) b.marks[mark.worker].push_back(mark.job);
    b.critical_paths.push_back(std::move(r.path.path));
  }
  for (auto& marks : b.marks) {
    std::sort(marks.begin(), marks.end());
    marks.erase(std::unique(marks.begin(), marks.end()), marks.end());
  }
  if (b.steps == 0) return b;
  b.ran = true;
  const Nanos count = static_cast<Nanos>(b.steps);
  b.measured_step = measured / count;
  b.replayed_step = replayed / count;
  b.step_gap = b.steps > 1 ? gaps / (count - 1) : 0;
  b.replayed_bubble = windows > 0 ? 1.0 - static_cast<double>(measured_busy) / static_cast<double>(windows) : 0;
  b.path.step_gaps = gaps;
  for (const auto& [key, time] : compute) b.path.compute.push_back({key.first, key.second, time});
  for (const auto& [key, time] : hand_offs) b.path.hand_offs.push_back({key.first, key.second, time});
  if (!slow_workers) return b;
  b.slowest_stage = speeds.slowest_stage;
  if (!speeds.balance.empty()) {  // the types' factors, as a slow stage's (without one: their mean)
    double sum = 0;
    for (const auto& [type, factor] : speeds.balance) sum += 1 / factor;
    b.slowest_stage_factor = sum / static_cast<double>(speeds.balance.size());
  }
  for (const SlowStage& stage : b.slow_stages)  // moved out of `speeds` above
    if (stage.stage == speeds.slowest_stage) b.slowest_stage_factor = stage.factor;
  const CauseFacts facts{b.slowest_stage, b.slowest_stage_factor, slow_workers};
  // What-ifs against the replayed run: its steps and the gaps between them.
  const Nanos run_time = replayed + gaps;
  for (size_t k = 0; k < kWhatIfs; ++k) {
    WhatIf w;
    w.kind = static_cast<WhatIfKind>(k);
    const Nanos time = predicted[k] + (DropsStepGaps(w.kind) ? 0 : gaps);
    w.step_time = predicted[k] / count;
    w.bubble_ratio = predicted_windows[k] > 0 ? 1.0 - static_cast<double>(busy[k]) / static_cast<double>(predicted_windows[k]) : 0;
    w.saved = (run_time - time) / count;
    w.gain = run_time > 0 ? static_cast<double>(run_time - time) / static_cast<double>(run_time) : 0;
    switch (w.kind) {
      case WhatIfKind::kBalancedStages: w.applies = !speeds.balance.empty(); break;
      case WhatIfKind::kNoSlowWorkers: w.applies = !slow_workers->empty(); break;
      case WhatIfKind::kNoStepGaps: w.applies = b.steps > 1; break;
      default: w.applies = true;
    }
    if (!w.applies) {
      w.step_time = b.replayed_step;
      w.bubble_ratio = b.replayed_bubble;
      w.saved = 0;
      w.gain = 0;
    }
    w.change = ChangeText(w.kind, facts, b);
    b.what_if.push_back(std::move(w));
  }
  // Causes worth fixing, by gain; a slow worker (the most specific cause)
  // goes first when it gains nearly as much as the top one, since it is
  // usually why its stage is the slowest.
  for (const WhatIf& w : b.what_if)
    if (w.kind != WhatIfKind::kAll && w.applies && w.gain >= kCauseFloor)
      b.causes.push_back({w.kind, CauseText(w, facts, b), w.saved, w.gain});
  std::stable_sort(b.causes.begin(), b.causes.end(), [](const Cause& x, const Cause& y) { return x.gain > y.gain; });
  for (size_t i = 1; i < b.causes.size(); ++i)
    if (b.causes[i].kind == WhatIfKind::kNoSlowWorkers && b.causes[i].gain >= 0.9 * b.causes[0].gain)
      std::rotate(b.causes.begin(), b.causes.begin() + static_cast<std::ptrdiff_t>(i), b.causes.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  std::optional<WhatIfKind> drawn = drawing.kind;
  if (!drawn && !b.causes.empty()) drawn = b.causes.front().kind;
  if (drawing.draw && drawn) b.drawn_what_if = DrawWhatIf(lanes, by_window, counting, steps.size(), speeds, *drawn, threads);
  return b;
}

}  // namespace

Bottleneck AnalyzeBottleneck(const Timeline& timeline, const std::vector<StepWindow>& steps, int threads,
                             std::vector<SlowWorker>* slow_workers, const WhatIfDrawing& drawing) {
  return Bottlenecks(timeline, steps, threads, slow_workers, drawing);
}

Bottleneck FindCriticalPaths(const Timeline& timeline, const std::vector<StepWindow>& steps, int threads) {
  return Bottlenecks(timeline, steps, threads, nullptr);
}

}  // namespace jobviz
