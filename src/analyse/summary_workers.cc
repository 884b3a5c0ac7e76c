#include "analyse/summary_workers.h"

#include <algorithm>
#include <map>
#include <unordered_set>

namespace jobviz {

namespace {

using nlohmann::json;

json WorkerEntry(const Analysis& a, size_t index) {
  const WorkerAnalysis& w = a.workers[index];
  json steps = json::array();
  for (const WorkerStep& ws : w.steps) {
    steps.push_back({{"step", StepNumber(ws.step)}, {"busy_us", ToMicros(ws.busy)}, {"idle_us", ToMicros(ws.idle)}});
    if (StepRun(ws.step) > 0) steps.back()["run"] = StepRun(ws.step);
  }
  const double speed = SpeedOf(a.bottleneck, index);
  json entry = {{"machine", w.machine}, {"worker", w.worker}, {"name", w.name},
                {"busy_us", ToMicros(w.busy)}, {"idle_us", ToMicros(w.idle)},
                {"bubble_ratio", w.bubble_ratio}, {"speed", speed > 0 ? json(speed) : json(nullptr)},
                {"steps", steps}};
  if (a.topology.hybrid()) {
    entry["stage"] = w.role.known() ? json(w.role.stage) : json(nullptr);
    entry["mp"] = w.role.peer;
    entry["replica"] = w.role.replica;
    entry["rank"] = w.role.rank >= 0 ? json(w.role.rank) : json(nullptr);
  } else if (w.role.known()) {
    entry["stage"] = w.role.stage;  // diff folds workers by it
  }
  return entry;
}

// min, p50 (the lower median) and max of one value over a group.
json Spread(std::vector<double> values) {
  if (values.empty()) return nullptr;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(PercentileIndex(values, 50));
  std::nth_element(values.begin(), middle, values.end());
  return {{"min", *std::min_element(values.begin(), values.end())}, {"p50", *middle},
          {"max", *std::max_element(values.begin(), values.end())}};
}

// One group's spread: its workers' busy, idle, bubble and speed, and the
// most and least idle of them by name (and, with `named`, listed in full).
json Fold(const Analysis& a, const std::vector<size_t>& members, std::unordered_set<size_t>* named) {
  std::vector<double> busy, idle, bubble, speed;
  size_t most = members.front(), least = members.front();
  for (size_t w : members) {
    const WorkerAnalysis& worker = a.workers[w];
    busy.push_back(ToMicros(worker.busy));
    idle.push_back(ToMicros(worker.idle));
    bubble.push_back(worker.bubble_ratio);
    if (SpeedOf(a.bottleneck, w) > 0) speed.push_back(SpeedOf(a.bottleneck, w));
    if (worker.bubble_ratio > a.workers[most].bubble_ratio) most = w;
    if (worker.bubble_ratio < a.workers[least].bubble_ratio) least = w;
  }
  if (named) named->insert({most, least});
  return {{"workers", members.size()}, {"busy_us", Spread(std::move(busy))}, {"idle_us", Spread(std::move(idle))},
          {"bubble_ratio", Spread(std::move(bubble))}, {"speed", Spread(std::move(speed))},
          {"most_idle", a.workers[most].name}, {"least_idle", a.workers[least].name}};
}

// Each group of `key`'s value (-1: a worker without one), in key order.
template <typename Key>
std::map<int, std::vector<size_t>> GroupBy(const Analysis& a, Key key) {
  std::map<int, std::vector<size_t>> groups;
  for (size_t w = 0; w < a.workers.size(); ++w) groups[key(a.workers[w])].push_back(w);
  return groups;
}

json Folds(const Analysis& a, const std::map<int, std::vector<size_t>>& groups, const char* key,
           std::unordered_set<size_t>* named) {
  json folds = json::array();
  for (const auto& [value, members] : groups) {
    json fold = Fold(a, members, named);
    fold[key] = value >= 0 ? json(value) : json(nullptr);
    folds.push_back(std::move(fold));
  }
  return folds;
}

// The workers the rest of the summary names: the slow ones and the lagging peers.
void AddNamedElsewhere(const Analysis& a, std::unordered_set<size_t>* named) {
  std::map<std::pair<int, int>, size_t> index_of;
  for (size_t w = 0; w < a.workers.size(); ++w) index_of[{a.workers[w].machine, a.workers[w].worker}] = w;
  const auto add = [&](int machine, int worker) {
    if (const auto it = index_of.find({machine, worker}); it != index_of.end()) named->insert(it->second);
  };
  for (const SlowWorker& w : a.slow_workers) add(w.machine, w.worker);
  for (const LaggingPeer& p : a.lagging_peers) add(p.machine, p.worker);
}

}  // namespace

bool FoldsWorkers(WorkerListing listing, size_t workers) {
  return listing == WorkerListing::kFolded || (listing == WorkerListing::kAuto && workers > kListedWorkers);
}

void AddSummaryWorkers(const Analysis& a, WorkerListing listing, json& doc) {
  doc["workers"] = json::array();
  if (!FoldsWorkers(listing, a.workers.size())) {
    for (size_t w = 0; w < a.workers.size(); ++w) doc["workers"].push_back(WorkerEntry(a, w));
    return;
  }
  std::unordered_set<size_t> named;
  AddNamedElsewhere(a, &named);
  json folded = {{"workers", a.workers.size()},
                 {"by_stage", Folds(a, GroupBy(a, [](const WorkerAnalysis& w) { return w.role.stage; }), "stage", &named)}};
  if (a.topology.hybrid())
    folded["by_replica"] =
        Folds(a, GroupBy(a, [](const WorkerAnalysis& w) { return w.role.known() ? w.role.replica : -1; }), "replica",
              nullptr);  // 1,024 replicas' extremes would be 2,048 workers listed: named in their fold only
  std::vector<size_t> listed(named.begin(), named.end());
  std::sort(listed.begin(), listed.end());
  for (size_t w : listed) doc["workers"].push_back(WorkerEntry(a, w));
  folded["listed"] = listed.size();
  doc["workers_folded"] = std::move(folded);
}

size_t SummaryWorkerCount(const json& summary) {
  if (SummaryFoldsWorkers(summary)) return summary["workers_folded"].value("workers", size_t{0});
  const auto workers = summary.find("workers");
  return workers != summary.end() && workers->is_array() ? workers->size() : 0;
}

bool SummaryFoldsWorkers(const json& summary) {
  const auto folded = summary.find("workers_folded");
  return folded != summary.end() && folded->is_object();
}

}  // namespace jobviz
