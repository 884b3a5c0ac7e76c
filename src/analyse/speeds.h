// How fast each worker and stage runs its jobs against its peers' and the
// other stages' medians (docs/analysis.md, "Slow workers and slow stages"),
// and what a job would take with a cause removed: what the bottleneck
// analysis's replays and slow-worker findings read (analyse/bottleneck.cc).
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyse/slow_workers.h"
#include "analyse/step_graph.h"
#include "model/model.h"

namespace jobviz {

// A worker's values by job type index: a worker runs a handful of types, so
// a sorted list, not a hash map per worker (131,072 workers' maps took
// longer to build than the replays took to read them). Add every entry,
// then Sort once, then Find.
template <typename T>
class ByType {
 public:
  void Add(std::uint32_t type, T value) { entries_.emplace_back(type, value); }
  void Sort() { std::sort(entries_.begin(), entries_.end(), [](const auto& a, const auto& b) { return a.first < b.first; }); }
  const T* Find(std::uint32_t type) const {
    const auto it = std::lower_bound(entries_.begin(), entries_.end(), type,
                                     [](const std::pair<std::uint32_t, T>& e, std::uint32_t t) { return e.first < t; });
    return it != entries_.end() && it->first == type ? &it->second : nullptr;
  }
  bool Has(std::uint32_t type) const { return Find(type) != nullptr; }

 private:
  std::vector<std::pair<std::uint32_t, T>> entries_;
};

// Median job durations by (stage, type) and by (worker, type), and what the
// replays need from them: the slowest stage's speed-up per type and each
// slow worker's factor per type.
struct Speeds {
  std::unordered_map<std::uint64_t, Nanos> stage_median;  // StageType(stage, type index)
  int slowest_stage = -1;
  std::unordered_map<std::uint32_t, double> balance;             // type index -> factor (< 1) on the slowest stage
  std::vector<ByType<double>> slow;   // per worker: type index -> its factor
  std::vector<ByType<Nanos>> median;  // per worker: type index -> its median
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

// The speeds of every worker of `lanes` (slow workers into `slow_workers`),
// on up to `threads` threads.
Speeds MeasureSpeeds(const Timeline& timeline, const GraphLanes& lanes, int threads, std::vector<SlowWorker>* slow_workers);
// Fills lane_types from stage_median and balance.
void AddLaneTypes(const GraphLanes& lanes, Speeds* s);

// The duration of a lane job when its slow peers run at their reference speed.
Nanos FixedDuration(const StepGraph& g, const StageJob& node, const GraphLanes& lanes, const Speeds& speeds);
// The duration of a lane job when its peers' outlier jobs take their worker's median.
Nanos WithoutOutliers(const StepGraph& g, const StageJob& node, const GraphLanes& lanes, const Speeds& speeds);

}  // namespace jobviz
