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
#include "analyse/step_jobs.h"
#include "read/parallel_for.h"

namespace jobviz {

Nanos PathBreakdown::compute_total() const {
  Nanos t = 0;
  for (const Compute& c : compute) t += c.time;
  return t;
}
Nanos PathBreakdown::hand_off_total() const {
  Nanos t = 0;
  for (const HandOff& h : hand_offs) t += h.time;
  return t;
}
Nanos PathBreakdown::total() const { return compute_total() + hand_off_total() + all_reduce + stall + step_start + step_gaps; }

const char* WhatIfKey(WhatIfKind kind) {
  switch (kind) {
    case WhatIfKind::kBalancedStages: return "balanced_stages";
    case WhatIfKind::kFreeHandOffs: return "free_hand_offs";
    case WhatIfKind::kNoOutliers: return "no_outliers";
    case WhatIfKind::kNoStall: return "no_stall";
    case WhatIfKind::kNoSlowWorkers: return "no_slow_workers";
    case WhatIfKind::kNoStepGaps: return "no_step_gaps";
    case WhatIfKind::kAll: case WhatIfKind::kCount: break;
  }
  return "all";
}

double SpeedOf(const Bottleneck& b, size_t worker) { return worker < b.speed.size() ? b.speed[worker] : 0; }

double MeasuredWallPerStep(const Bottleneck& b) {
  if (b.steps == 0) return 0;
  return static_cast<double>(b.measured_step * static_cast<Nanos>(b.steps) + b.path.step_gaps) / static_cast<double>(b.steps);
}

double PredictedWallPerStep(const Bottleneck& b, WhatIfKind kind) {
  if (b.steps == 0 || static_cast<size_t>(kind) >= b.what_if.size()) return 0;
  const double replayed = static_cast<double>(b.replayed_step * static_cast<Nanos>(b.steps) + b.path.step_gaps) /
                          static_cast<double>(b.steps);
  return replayed - static_cast<double>(b.what_if[static_cast<size_t>(kind)].saved);
}

bool OnCriticalPath(const Bottleneck& b, size_t worker, std::uint32_t job) {
  if (worker >= b.marks.size()) return false;
  return std::binary_search(b.marks[worker].begin(), b.marks[worker].end(), job);
}

namespace {

constexpr size_t kWhatIfs = static_cast<size_t>(WhatIfKind::kCount);

std::uint64_t StageType(int stage, std::uint32_t type) { return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(stage)) << 32) | type; }
int StageOf(std::uint64_t key) { return static_cast<int>(static_cast<std::uint32_t>(key >> 32)); }
std::uint32_t TypeOf(std::uint64_t key) { return static_cast<std::uint32_t>(key); }

// Median job durations by (stage, type) and by (worker, type), and what the
// replays need from them: the slowest stage's speed-up per type and each
// slow worker's factor per type.
struct Speeds {
  std::unordered_map<std::uint64_t, Nanos> stage_median;  // StageType(stage, type index)
  int slowest_stage = -1;
  std::unordered_map<std::uint32_t, double> balance;             // type index -> factor (< 1) on the slowest stage
  std::vector<std::unordered_map<std::uint32_t, double>> slow;   // per worker: type index -> its factor
  std::vector<std::unordered_map<std::uint32_t, Nanos>> median;  // per worker: type index -> its median
  bool any_slow = false;
  std::vector<SlowStage> slow_stages;
  std::vector<double> speed;
  size_t outlier_count = 0;
  std::vector<OutlierJob> outliers;
  // Per lane, for each job type of its stage: the balancing factor (1 off
  // the slowest stage), looked up per job.
  struct TypeSpeed {
    std::uint32_t type = 0;
    double balance = 1;
  };
  std::vector<std::vector<TypeSpeed>> lane_types;
  const TypeSpeed* Of(std::uint32_t lane, std::uint32_t type) const {
    for (const TypeSpeed& t : lane_types[lane])
      if (t.type == type) return &t;
    return nullptr;
  }
};

void AddLaneTypes(const GraphLanes& lanes, Speeds* s) {
  std::unordered_map<int, std::vector<std::uint32_t>> lanes_of_stage;
  for (std::uint32_t l = 0; l < lanes.lanes.size(); ++l) lanes_of_stage[lanes.lanes[l].stage].push_back(l);
  s->lane_types.assign(lanes.lanes.size(), {});
  for (const auto& entry : s->stage_median) {
    const std::uint64_t key = entry.first;
    double balance = 1;
    if (StageOf(key) == s->slowest_stage)
      if (const auto it = s->balance.find(TypeOf(key)); it != s->balance.end()) balance = it->second;
    for (std::uint32_t l : lanes_of_stage[StageOf(key)]) s->lane_types[l].push_back({TypeOf(key), balance});
  }
}

Nanos MedianOf(std::vector<Nanos>& values) { return PercentileOf(values, 50); }

bool IsOutlier(Nanos duration, Nanos median) { return static_cast<double>(duration) > kOutlierFactor * static_cast<double>(median); }

// Durations by (worker, type); medians per worker and type.
struct WorkerType {
  std::uint32_t worker, type;
  Name name;
  std::vector<Nanos> durations;
  Nanos median = 0;
};

// Stages whose pass jobs take longer than the other stages' (docs/analysis.md,
// "Slow workers and slow stages"): per (stage, type), the median of its
// workers' medians, its slow workers left out (a bad GPU is not a bad split);
// a stage's factor is its job time at those medians over the same jobs at
// the median of the other stages'.
std::vector<SlowStage> FindSlowStages(const std::vector<WorkerType>& per, const GraphLanes& lanes, const Speeds& s,
                                      PerName<JobKind, ClassifyJobType>& kinds) {
  struct StageType {
    std::vector<Nanos> medians;
    size_t jobs = 0;
    Nanos median = 0;
  };
  std::map<std::pair<int, std::uint32_t>, StageType> by_key;  // (stage, type)
  for (const WorkerType& wt : per) {
    if (kinds.Of(wt.name).pass == Pass::kOther) continue;
    StageType& st = by_key[{lanes.lanes[lanes.lane_of[wt.worker]].stage, wt.type}];
    st.jobs += wt.durations.size();
    if (!s.slow[wt.worker].count(wt.type)) st.medians.push_back(wt.median);
  }
  std::map<int, std::pair<double, double>> time;  // stage -> (at its speed, at the others')
  // Per type, every stage's median, sorted: the median of the others is
  // read off it by index (a run of 2,048 stages would otherwise gather the
  // others once per stage).
  std::map<std::uint32_t, std::vector<Nanos>> by_type;
  for (auto& [key, st] : by_key)
    if (!st.medians.empty()) by_type[key.second].push_back(st.median = MedianOf(st.medians));
  for (auto& [type, medians] : by_type) std::sort(medians.begin(), medians.end());
  for (const auto& [key, st] : by_key) {
    const std::vector<Nanos>& all = by_type[key.second];
    if (st.medians.empty() || all.size() < 2) continue;
    // The nearest-rank median (MedianOf) of `all` without one copy of st.median.
    const size_t own_at = static_cast<size_t>(std::lower_bound(all.begin(), all.end(), st.median) - all.begin());
    const size_t others = all.size() - 1, rank = std::max<size_t>(1, (others + 1) / 2) - 1;
    const Nanos reference_median = all[rank < own_at ? rank : rank + 1];
    auto& [own, reference] = time[key.first];
    own += static_cast<double>(st.median) * static_cast<double>(st.jobs);
    reference += static_cast<double>(reference_median) * static_cast<double>(st.jobs);
  }
  std::vector<SlowStage> slow;
  for (const auto& [stage, t] : time)
    if (t.second > 0 && t.first >= kSlowFactor * t.second) slow.push_back({stage, t.first / t.second});
  std::stable_sort(slow.begin(), slow.end(), [](const SlowStage& a, const SlowStage& b) { return a.factor > b.factor; });
  return slow;
}

// The jobs over kOutlierFactor times their worker's median of the type;
// the worst kShownOutliers by time above the median.
constexpr size_t kShownOutliers = 5;
void FindOutliers(const Timeline& timeline, const GraphLanes& lanes, const Speeds& s, const UnfinishedStepSet& unfinished,
                  size_t* count, std::vector<OutlierJob>* worst) {
  struct Found {
    Nanos excess;
    std::uint32_t worker, job;
  };
  std::vector<Found> found;
  for (std::uint32_t w = 0; w < lanes.workers.size(); ++w) {
    if (lanes.lane_of[w] < 0) continue;
    const std::vector<Job>& jobs = lanes.workers[w]->jobs;
    for (std::uint32_t j = 0; j < jobs.size(); ++j) {
      if (unfinished.Contains(jobs[j].step)) continue;
      const auto it = s.median[w].find(jobs[j].type.index());
      const Nanos d = jobs[j].end - jobs[j].start;
      if (it != s.median[w].end() && IsOutlier(d, it->second)) found.push_back({d - it->second, w, j});
    }
  }
  *count = found.size();
  const size_t shown = std::min(found.size(), kShownOutliers);
  std::partial_sort(found.begin(), found.begin() + static_cast<std::ptrdiff_t>(shown), found.end(), [](const Found& a, const Found& b) {
    return std::tie(b.excess, a.worker, a.job) < std::tie(a.excess, b.worker, b.job);
  });
  for (size_t i = 0; i < shown; ++i) {
    const Worker& worker = *lanes.workers[found[i].worker];
    const Job& job = worker.jobs[found[i].job];
    worst->push_back({WorkerName(timeline, worker), job.step, job.type.str(), job.micro_batch, job.end - job.start,
                      job.end - job.start - found[i].excess});
  }
}

Speeds MeasureSpeeds(const Timeline& timeline, const GraphLanes& lanes, int threads, std::vector<SlowWorker>* slow_workers) {
  Speeds s;
  s.slow.resize(lanes.workers.size());
  PerName<JobKind, ClassifyJobType> kinds;
  // Each worker's durations by type, on its own thread (a worker has a few types).
  std::vector<std::vector<WorkerType>> per_worker(lanes.workers.size());
  std::vector<Nanos> load(lanes.workers.size(), 0);
  const UnfinishedStepSet unfinished(timeline);
  ParallelFor(lanes.workers.size(), threads, [&](size_t w) {
    if (lanes.lane_of[w] < 0) return;
    std::vector<WorkerType>& types = per_worker[w];
    for (const Job& job : lanes.workers[w]->jobs) {
      if (unfinished.Contains(job.step)) continue;  // a stopped step's jobs are no measure of speed
      const Nanos d = job.end - job.start;
      load[w] += d;
      auto it = std::find_if(types.begin(), types.end(), [&](const WorkerType& t) { return t.type == job.type.index(); });
      if (it == types.end()) {
        types.push_back({static_cast<std::uint32_t>(w), job.type.index(), job.type, {}, 0});
        it = types.end() - 1;
      }
      it->durations.push_back(d);
    }
  });
  std::vector<WorkerType> per;
  std::map<int, std::pair<Nanos, int>> stage_load;  // stage -> (job time, workers)
  std::unordered_map<std::uint64_t, std::vector<const WorkerType*>> by_stage_type;
  for (size_t w = 0; w < lanes.workers.size(); ++w) {
    if (lanes.lane_of[w] < 0) continue;
    auto& [time, workers] = stage_load[lanes.lanes[lanes.lane_of[w]].stage];
    time += load[w];
    workers += !lanes.workers[w]->jobs.empty();
    for (WorkerType& wt : per_worker[w]) per.push_back(std::move(wt));
  }
  for (const WorkerType& wt : per) by_stage_type[StageType(lanes.lanes[lanes.lane_of[wt.worker]].stage, wt.type)].push_back(&wt);
  // Each (stage, type)'s median over its workers' jobs, and each worker's own medians.
  std::vector<std::pair<std::uint64_t, const std::vector<const WorkerType*>*>> keys;
  for (const auto& [key, members] : by_stage_type) keys.emplace_back(key, &members);
  std::vector<Nanos> medians(keys.size());
  ParallelFor(keys.size(), threads, [&](size_t k) {
    std::vector<Nanos> pooled;
    for (const WorkerType* wt : *keys[k].second) pooled.insert(pooled.end(), wt->durations.begin(), wt->durations.end());
    medians[k] = MedianOf(pooled);
  });
  for (size_t k = 0; k < keys.size(); ++k) s.stage_median[keys[k].first] = medians[k];
  // The slowest stage: the most job time per worker.
  double most = -1;
  for (const auto& [stage, load] : stage_load)
    if (load.second > 0 && static_cast<double>(load.first) / load.second > most) {
      most = static_cast<double>(load.first) / load.second;
      s.slowest_stage = stage;
    }
  if (stage_load.size() > 1)
    for (const auto& [key, median] : s.stage_median) {
      if (StageOf(key) != s.slowest_stage || median <= 0) continue;
      std::vector<Nanos> others;
      for (const auto& [other, m] : s.stage_median)
        if (TypeOf(other) == TypeOf(key) && StageOf(other) != s.slowest_stage) others.push_back(m);
      if (others.empty()) continue;
      const double factor = static_cast<double>(MedianOf(others)) / static_cast<double>(median);
      if (factor < 1) s.balance[TypeOf(key)] = factor;
    }
  // Slow workers: each pass type's median against the median of the same
  // stage's other workers (its peers and the other replicas).
  ParallelFor(per.size(), threads, [&](size_t i) {
    per[i].median = MedianOf(per[i].durations);  // reorders them: the count below does not mind
  });
  s.median.resize(lanes.workers.size());
  for (const WorkerType& wt : per) s.median[wt.worker][wt.type] = wt.median;
  FindOutliers(timeline, lanes, s, unfinished, &s.outlier_count, &s.outliers);
  std::map<std::uint32_t, SlowWorker> found;
  std::vector<std::pair<double, double>> time(lanes.workers.size());  // per worker: (at its medians, at its references')
  for (const WorkerType& wt : per) {
    const Worker& worker = *lanes.workers[wt.worker];
    const Name type_name = wt.name;
    if (kinds.Of(type_name).pass == Pass::kOther) continue;
    const StageLane& lane = lanes.lanes[lanes.lane_of[wt.worker]];
    std::vector<Nanos> others;
    bool peers = false, replicas = false;
    for (const WorkerType* other : by_stage_type.at(StageType(lane.stage, wt.type))) {
      if (other->worker == wt.worker) continue;
      others.push_back(other->median);
      (lanes.lane_of[other->worker] == lanes.lane_of[wt.worker] ? peers : replicas) = true;
    }
    if (others.empty() || wt.durations.size() < 2) continue;
    const Nanos reference = MedianOf(others);
    if (reference <= 0) continue;
    time[wt.worker].first += static_cast<double>(wt.median) * static_cast<double>(wt.durations.size());
    time[wt.worker].second += static_cast<double>(reference) * static_cast<double>(wt.durations.size());
    const double factor = static_cast<double>(wt.median) / static_cast<double>(reference);
    size_t slower = 0;
    const double above = 1 + (kSlowFactor - 1) / 2;
    for (Nanos d : wt.durations) slower += static_cast<double>(d) > above * static_cast<double>(reference);
    if (factor < kSlowFactor || static_cast<double>(slower) < kSlowConsistency * static_cast<double>(wt.durations.size())) continue;
    s.slow[wt.worker][wt.type] = factor;
    SlowWorker& sw = found[wt.worker];
    sw.machine = worker.machine;
    sw.worker = worker.index;
    sw.name = WorkerName(timeline, worker);
    sw.role = worker.role;
    sw.compared_with = peers && replicas ? "its peers and the other replicas" : peers ? "its tensor-parallel peers" : "the other replicas";
    sw.factor = std::max(sw.factor, factor);
    sw.types.push_back({type_name.str(), factor, slower, wt.durations.size()});
  }
  s.speed.assign(lanes.workers.size(), 0);
  for (size_t w = 0; w < lanes.workers.size(); ++w)
    if (time[w].second > 0) s.speed[w] = time[w].first / time[w].second;
  s.slow_stages = FindSlowStages(per, lanes, s, kinds);
  for (auto& [w, sw] : found) {
    std::sort(sw.types.begin(), sw.types.end(), [](const SlowJobType& a, const SlowJobType& b) { return a.type < b.type; });
    slow_workers->push_back(std::move(sw));
  }
  std::stable_sort(slow_workers->begin(), slow_workers->end(),
                   [](const SlowWorker& a, const SlowWorker& b) { return a.factor > b.factor; });
  return s;
}

// One step's graph, critical path and replays.
struct StepResult {
  bool empty = true;
  Nanos start = 0, end = 0, replayed = 0;
  std::array<Nanos, kWhatIfs> step_time{}, busy{};
  Nanos measured_busy = 0;
  size_t graph_workers = 0, contradicted = 0, overlaps = 0;
  std::vector<PathBreakdown::Compute> compute;
  std::vector<PathBreakdown::HandOff> hand_offs;
  Nanos all_reduce = 0, stall = 0, step_start = 0;
  bool barrier = false;
  CriticalPathStep path;
  std::vector<MemberJob> marks;  // the path's jobs, every peer's
};

// The duration of a lane job when each peer's job takes `duration(worker,
// job)` (a peer's job as measured: -1): the lane job ends when its last peer's does.
Nanos MembersDuration(const StepGraph& g, const StageJob& node, const GraphLanes& lanes, const auto& duration) {
  Nanos end = node.start;
  bool changed = false;
  for (std::uint32_t k = 0; k < node.members; ++k) {
    const MemberJob& m = g.members[node.first_member + k];
    const Job& job = lanes.workers[m.worker]->jobs[m.job];
    const Nanos d = duration(m.worker, job);
    changed |= d >= 0;
    end = std::max(end, job.start + (d >= 0 ? d : job.end - job.start));
  }
  return changed ? end - node.start : node.end - node.start;
}

// The duration of a lane job when its slow peers run at their reference speed.
Nanos FixedDuration(const StepGraph& g, const StageJob& node, const GraphLanes& lanes, const Speeds& speeds) {
  return MembersDuration(g, node, lanes, [&](std::uint32_t worker, const Job& job) -> Nanos {
    const auto it = speeds.slow[worker].find(job.type.index());
    if (it == speeds.slow[worker].end()) return -1;
    return static_cast<Nanos>(std::llround(static_cast<double>(job.end - job.start) / it->second));
  });
}

// The duration of a lane job when its peers' outlier jobs take their worker's median.
Nanos WithoutOutliers(const StepGraph& g, const StageJob& node, const GraphLanes& lanes, const Speeds& speeds) {
  return MembersDuration(g, node, lanes, [&](std::uint32_t worker, const Job& job) -> Nanos {
    const auto it = speeds.median[worker].find(job.type.index());
    if (it == speeds.median[worker].end() || !IsOutlier(job.end - job.start, it->second)) return -1;
    return it->second;
  });
}

// The step's critical path, by cause, into `r`.
void AddCriticalPath(const StepGraph& g, const GraphLanes& lanes, std::int64_t step, StepResult* result) {
  StepResult& r = *result;
  r.path.step = step;
  r.path.start = g.start;
  r.path.end = g.end;
  std::map<std::pair<int, std::uint32_t>, std::pair<Name, Nanos>> compute;
  std::map<std::pair<int, int>, Nanos> hand_offs;
  const std::vector<PathPart> parts = CriticalPath(g);
  // Kept for every step until the traces are written, and taken while the
  // other threads' step graphs are at their largest (the run's peak
  // memory): sized exactly, not by doubling.
  size_t jobs = 0, marks = 0;
  for (const PathPart& part : parts)
    if (part.kind == PathPartKind::kJob) {
      ++jobs;
      marks += g.jobs[part.job].members;
    }
  r.path.jobs.reserve(jobs);
  r.marks.reserve(marks);
  CriticalJob pending;  // the wait before a job comes before the job in time order
  for (const PathPart& part : parts) {
    const StageJob& node = g.jobs[part.job];
    const int stage = lanes.lanes[node.lane].stage;
    switch (part.kind) {
      case PathPartKind::kStepStart:
        r.step_start += part.length;
        r.path.step_start = part.length;
        break;
      case PathPartKind::kHandOff: {
        const int from = lanes.lanes[g.jobs[part.from].lane].stage;
        hand_offs[{from, stage}] += part.length;
        pending.hand_off = part.length;
        pending.from_stage = from;
        break;
      }
      case PathPartKind::kAllReduce:
        r.all_reduce += part.length;
        pending.all_reduce = part.length;
        pending.from_stage = lanes.lanes[g.jobs[part.from].lane].stage;
        break;
      case PathPartKind::kStall:
        r.stall += part.length;
        pending.stall = part.length;
        break;
      case PathPartKind::kJob: {
        auto& [type, time] = compute[{stage, node.type.index()}];
        type = node.type;
        time += part.length;
        const MemberJob& first = g.members[node.first_member];
        pending.worker = first.worker;
        pending.job = first.job;
        pending.stage = stage;
        pending.replica = lanes.lanes[node.lane].replica;
        pending.type = node.type;
        pending.micro_batch = node.micro_batch;
        pending.start = node.start;
        pending.end = node.end;
        r.path.jobs.push_back(pending);
        for (std::uint32_t k = 0; k < node.members; ++k)  // every peer's job is on the path
          r.marks.push_back(g.members[node.first_member + k]);
        pending = CriticalJob();
        break;
      }
    }
  }
  for (const auto& [key, value] : compute) r.compute.push_back({key.first, value.first.str(), value.second});
  for (const auto& [key, time] : hand_offs) r.hand_offs.push_back({key.first, key.second, time});
}

// What one thread keeps from step to step (StepGraphRoom says why).
struct StepWork {
  std::vector<std::span<const std::uint32_t>> step_jobs;
  StepGraph graph;
  StepGraphRoom room;
  std::vector<Nanos> durations;  // per job, kReplays each
  ReplayScratch scratch;
};

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
  work.step_jobs.assign(lanes.workers.size(), {});
  for (size_t w = 0; w < lanes.workers.size(); ++w)
    if (lanes.lane_of[w] >= 0) work.step_jobs[w] = by_window[w].Of(window, counting);
  BuildStepGraph(lanes, work.step_jobs, speeds_or_null != nullptr, &work.graph, &work.room);
  const StepGraph& g = work.graph;
  if (g.jobs.empty()) return r;
  r.empty = false;
  r.start = g.start;
  r.end = g.end;
  r.graph_workers = g.graph_workers;
  r.contradicted = g.contradicted;
  r.overlaps = g.overlaps;
  r.barrier = g.global_barrier;
  AddCriticalPath(g, lanes, step, &r);
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
  work.step_jobs.assign(lanes.workers.size(), {});
  for (size_t w = 0; w < lanes.workers.size(); ++w)
    if (lanes.lane_of[w] >= 0) work.step_jobs[w] = by_window[w].Of(window, counting);
  BuildStepGraph(lanes, work.step_jobs, true, &work.graph, &work.room);
  const StepGraph& g = work.graph;
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
  std::atomic<size_t> next_step{0};
  const int thread_count = static_cast<int>(std::min<size_t>(static_cast<size_t>(ThreadCount(threads)), windows));
  ParallelFor(static_cast<size_t>(thread_count), thread_count, [&](size_t) {
    StepWork work;
    for (size_t k = next_step++; k < windows; k = next_step++) steps[k] = ReplayStep(lanes, by_window, counting, k, speeds, kind, work);
  });
  WhatIfRun run;
  run.kind = kind;
  run.jobs.resize(lanes.workers.size());
  const bool drop_gaps = kind == WhatIfKind::kNoStepGaps || kind == WhatIfKind::kAll;
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
  for (const StageLane& lane : lanes.lanes) peers_or_replicas |= lane.workers.size() > 1 || !lane.other_replicas.empty();
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
  // Steps handed out one at a time to threads that each keep their StepWork.
  std::vector<StepResult> results(steps.size());
  std::atomic<size_t> next_step{0};
  const int thread_count = static_cast<int>(std::min<size_t>(static_cast<size_t>(ThreadCount(threads)), steps.size()));
  ParallelFor(static_cast<size_t>(thread_count), thread_count, [&](size_t) {
    StepWork work;
    for (size_t k = next_step++; k < steps.size(); k = next_step++)
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
    for (const auto& c : r.compute) compute[{c.stage, c.type}] += c.time;
    for (const auto& h : r.hand_offs) hand_offs[{h.from, h.to}] += h.time;
    b.path.all_reduce += r.all_reduce;
    b.path.stall += r.stall;
    b.path.step_start += r.step_start;
    b.barrier_steps += r.barrier;
    for (const MemberJob& mark : r.marks) b.marks[mark.worker].push_back(mark.job);
    b.critical_paths.push_back(std::move(r.path));
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
    const bool drop_gaps = w.kind == WhatIfKind::kNoStepGaps || w.kind == WhatIfKind::kAll;
    const Nanos time = predicted[k] + (drop_gaps ? 0 : gaps);
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
