#include "analyse/speeds.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <unordered_map>

#include "analyse/analysis.h"
#include "analyse/schedule.h"
#include "model/unfinished_steps.h"
#include "read/parallel_for.h"

namespace jobviz {

namespace {

std::uint64_t StageType(int stage, std::uint32_t type) { return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(stage)) << 32) | type; }
int StageOf(std::uint64_t key) { return static_cast<int>(static_cast<std::uint32_t>(key >> 32)); }
std::uint32_t TypeOf(std::uint64_t key) { return static_cast<std::uint32_t>(key); }

Nanos MedianOf(std::vector<Nanos>& values) { return PercentileOf(values, 50); }

// MedianOf of values already sorted.
Nanos MedianOfSorted(const std::vector<Nanos>& sorted) { return Percentile(sorted, 50); }

// MedianOf of `sorted` with one value equal to `left_out` taken out (it
// holds one): a worker's stage without it, in O(log n).
Nanos MedianWithout(const std::vector<Nanos>& sorted, Nanos left_out) {
  const size_t others = sorted.size() - 1;
  if (others == 0) return 0;
  const size_t k = PercentileIndex(others, 50);  // among the others
  const size_t out = static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), left_out) - sorted.begin());
  return sorted[k < out ? k : k + 1];
}

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
    if (!s.slow[wt.worker].Has(wt.type)) st.medians.push_back(wt.median);
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
// the worst kShownOutliers by time above the median. Each worker on a
// thread, its worst kShownOutliers kept.
constexpr size_t kShownOutliers = 5;
void FindOutliers(const Timeline& timeline, const GraphLanes& lanes, const Speeds& s, const UnfinishedStepSet& unfinished,
                  int threads, size_t* count, std::vector<OutlierJob>* worst) {
  struct Found {
    Nanos excess;
    std::uint32_t worker, job;
  };
  const auto worse = [](const Found& a, const Found& b) { return std::tie(b.excess, a.worker, a.job) < std::tie(a.excess, b.worker, b.job); };
  std::vector<std::vector<Found>> per_worker(lanes.workers.size());
  std::vector<size_t> counts(lanes.workers.size(), 0);
  ParallelFor(lanes.workers.size(), threads, [&](size_t w) {
    if (lanes.lane_of[w] < 0) return;
    std::vector<Found>& found = per_worker[w];
    const std::vector<Job>& jobs = lanes.workers[w]->jobs;
    for (std::uint32_t j = 0; j < jobs.size(); ++j) {
      if (unfinished.Contains(jobs[j].step)) continue;
      const Nanos* median = s.median[w].Find(jobs[j].type.index());
      const Nanos d = jobs[j].end - jobs[j].start;
      if (median && IsOutlier(d, *median)) found.push_back({d - *median, static_cast<std::uint32_t>(w), j});
    }
    counts[w] = found.size();
    const size_t shown = std::min(found.size(), kShownOutliers);
    std::partial_sort(found.begin(), found.begin() + static_cast<std::ptrdiff_t>(shown), found.end(), worse);
    found.resize(shown);
  });
  std::vector<Found> found;
  *count = 0;
  for (size_t w = 0; w < per_worker.size(); ++w) {
    *count += counts[w];
    found.insert(found.end(), per_worker[w].begin(), per_worker[w].end());
  }
  const size_t shown = std::min(found.size(), kShownOutliers);
  std::partial_sort(found.begin(), found.begin() + static_cast<std::ptrdiff_t>(shown), found.end(), worse);
  for (size_t i = 0; i < shown; ++i) {
    const Worker& worker = *lanes.workers[found[i].worker];
    const Job& job = worker.jobs[found[i].job];
    worst->push_back({WorkerName(timeline, worker), job.step, job.type.str(), job.micro_batch, job.end - job.start,
                      job.end - job.start - found[i].excess});
  }
}

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

}  // namespace

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
    const auto type_of = [&](const Job& job) {
      return std::find_if(types.begin(), types.end(), [&](const WorkerType& t) { return t.type == job.type.index(); });
    };
    // Counted first, so that each type's durations are allocated once, not
    // grown: 24 allocations a worker fewer at 131,072 GPUs.
    std::vector<size_t> counts;
    for (const Job& job : lanes.workers[w]->jobs) {
      if (unfinished.Contains(job.step)) continue;  // a stopped step's jobs are no measure of speed
      const auto it = type_of(job);
      if (it != types.end()) {
        ++counts[static_cast<size_t>(it - types.begin())];
      } else {
        types.push_back({static_cast<std::uint32_t>(w), job.type.index(), job.type, {}, 0});
        counts.push_back(1);
      }
    }
    for (size_t t = 0; t < types.size(); ++t) types[t].durations.reserve(counts[t]);
    for (const Job& job : lanes.workers[w]->jobs) {
      if (unfinished.Contains(job.step)) continue;
      const Nanos d = job.end - job.start;
      load[w] += d;
      type_of(job)->durations.push_back(d);
    }
  });
  std::vector<WorkerType> per;
  size_t types = 0;
  for (const std::vector<WorkerType>& of_worker : per_worker) types += of_worker.size();
  per.reserve(types);  // grown by doubling, its moves and fresh pages were 0.15 s on one thread at 131,072 GPUs
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
    size_t count = 0;
    for (const WorkerType* wt : *keys[k].second) count += wt->durations.size();
    pooled.reserve(count);  // once: 270,000 durations a key at 131,072 GPUs, copied again at each doubling otherwise
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
  for (const WorkerType& wt : per) s.median[wt.worker].Add(wt.type, wt.median);
  ParallelFor(s.median.size(), threads, [&](size_t w) { s.median[w].Sort(); });
  FindOutliers(timeline, lanes, s, unfinished, threads, &s.outlier_count, &s.outliers);
  // Each (stage, type)'s workers' medians, sorted, and how many of them each
  // lane has: a worker's reference, the median of its stage's others, is
  // then one look-up (a copy and a selection per worker cost the square of
  // a stage's workers: 46 s at 8,192 workers a stage).
  struct Group {
    std::vector<Nanos> medians, healthy;  // sorted; healthy: of the workers not slow at the type
    std::unordered_map<int, size_t> per_lane;
  };
  std::unordered_map<std::uint64_t, Group> groups;
  for (const auto& [key, members] : by_stage_type) {
    Group& group = groups[key];
    for (const WorkerType* member : members) {
      group.medians.push_back(member->median);
      ++group.per_lane[lanes.lane_of[member->worker]];
    }
    std::sort(group.medians.begin(), group.medians.end());
  }
  const auto group_of = [&](const WorkerType& wt) -> Group& {
    return groups.at(StageType(lanes.lanes[lanes.lane_of[wt.worker]].stage, wt.type));
  };
  std::map<std::uint32_t, SlowWorker> found;
  std::vector<std::pair<double, double>> time(lanes.workers.size());  // per worker: (at its medians, at its references')
  for (const WorkerType& wt : per) {
    const Worker& worker = *lanes.workers[wt.worker];
    const Name type_name = wt.name;
    if (kinds.Of(type_name).pass == Pass::kOther) continue;
    const Group& group = group_of(wt);
    if (group.medians.size() < 2 || wt.durations.size() < 2) continue;
    const size_t same_lane = group.per_lane.at(lanes.lane_of[wt.worker]);
    const bool peers = same_lane > 1, replicas = group.medians.size() > same_lane;
    const Nanos reference = MedianWithout(group.medians, wt.median);
    if (reference <= 0) continue;
    const double factor = static_cast<double>(wt.median) / static_cast<double>(reference);
    size_t slower = 0;
    const double above = 1 + (kSlowFactor - 1) / 2;
    for (Nanos d : wt.durations) slower += static_cast<double>(d) > above * static_cast<double>(reference);
    if (factor < kSlowFactor || static_cast<double>(slower) < kSlowConsistency * static_cast<double>(wt.durations.size())) continue;
    s.slow[wt.worker].Add(wt.type, factor);
    SlowWorker& sw = found[wt.worker];
    sw.machine = worker.machine;
    sw.worker = worker.index;
    sw.name = WorkerName(timeline, worker);
    sw.role = worker.role;
    sw.compared_with = peers && replicas ? "its peers and the other replicas" : peers ? "its tensor-parallel peers" : "the other replicas";
    sw.factor = std::max(sw.factor, factor);
    sw.types.push_back({type_name.str(), factor, slower, wt.durations.size()});
  }
  for (const auto& [w, sw] : found) s.slow[w].Sort();
  const auto slow_at = [&](const WorkerType& wt) { return s.slow[wt.worker].Has(wt.type); };
  for (const auto& [key, members] : by_stage_type) {
    Group& group = groups[key];
    for (const WorkerType* member : members)
      if (!slow_at(*member)) group.healthy.push_back(member->median);
    std::sort(group.healthy.begin(), group.healthy.end());
  }
  // Each worker's speed against the same stage's other workers that are
  // not slow themselves: beside a slow replica, the healthy one is at 1.0x,
  // not "faster" (0.83x against the slow side); only the slow side stands out.
  for (const WorkerType& wt : per) {
    if (kinds.Of(wt.name).pass == Pass::kOther || wt.durations.size() < 2) continue;
    const Group& group = group_of(wt);
    if (group.medians.size() < 2) continue;
    // The healthy others (without this worker when it is one of them), else all the others.
    const bool healthy = !slow_at(wt);
    const Nanos reference = group.healthy.size() > (healthy ? 1 : 0)
                                ? (healthy ? MedianWithout(group.healthy, wt.median) : MedianOfSorted(group.healthy))
                                : MedianWithout(group.medians, wt.median);
    if (reference <= 0) continue;
    time[wt.worker].first += static_cast<double>(wt.median) * static_cast<double>(wt.durations.size());
    time[wt.worker].second += static_cast<double>(reference) * static_cast<double>(wt.durations.size());
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

Nanos FixedDuration(const StepGraph& g, const StageJob& node, const GraphLanes& lanes, const Speeds& speeds) {
  return MembersDuration(g, node, lanes, [&](std::uint32_t worker, const Job& job) -> Nanos {
    const double* factor = speeds.slow[worker].Find(job.type.index());
    if (!factor) return -1;
    return static_cast<Nanos>(std::llround(static_cast<double>(job.end - job.start) / *factor));
  });
}

Nanos WithoutOutliers(const StepGraph& g, const StageJob& node, const GraphLanes& lanes, const Speeds& speeds) {
  return MembersDuration(g, node, lanes, [&](std::uint32_t worker, const Job& job) -> Nanos {
    const Nanos* median = speeds.median[worker].Find(job.type.index());
    if (!median || !IsOutlier(job.end - job.start, *median)) return -1;
    return *median;
  });
}

}  // namespace jobviz
