#include "align/pipeline_order.h"

#include <algorithm>
#include <unordered_map>

namespace jobviz {

Direction DirectionOf(const std::string& type) {
  if (type.rfind("forward", 0) == 0) return Direction::kForward;
  if (type.rfind("backward", 0) == 0 && type.rfind("backward_w", 0) != 0) return Direction::kBackward;
  return Direction::kOther;
}

namespace {

// (type, micro-batch, occurrence), the type interned per call.
struct PairKey {
  int type;
  std::int64_t micro_batch;
  int occurrence;
  bool operator==(const PairKey& o) const {
    return type == o.type && micro_batch == o.micro_batch && occurrence == o.occurrence;
  }
};
struct PairKeyHash {
  size_t operator()(const PairKey& k) const {
    return std::hash<std::int64_t>()(k.micro_batch * 1000003 + k.type * 7919 + k.occurrence);
  }
};

struct Stage {
  int machine;
  const Worker* worker;
  std::unordered_map<PairKey, const Job*, PairKeyHash> jobs;
};

// One stage's hand-off jobs by (type, micro-batch, occurrence); `type_ids`
// interns the types across stages.
Stage BuildStage(int machine, const Worker& worker, std::map<std::string, int>& type_ids) {
  Stage stage{machine, &worker, {}};
  stage.jobs.reserve(worker.jobs.size());
  std::unordered_map<PairKey, int, PairKeyHash> seen;  // occurrence 0 -> count so far
  for (const Job& job : worker.jobs) {  // sorted by start
    if (DirectionOf(job.type) == Direction::kOther) continue;
    const int type = type_ids.try_emplace(job.type, static_cast<int>(type_ids.size())).first->second;
    const int occurrence = seen[{type, job.micro_batch, 0}]++;
    stage.jobs[{type, job.micro_batch, occurrence}] = &job;
  }
  return stage;
}

}  // namespace

std::vector<std::pair<int, const Worker*>> WorkersInStageOrder(const Timeline& timeline) {
  std::vector<std::pair<int, const Worker*>> order;
  if (timeline.stage_order.empty()) {
    for (size_t m = 0; m < timeline.machines.size(); ++m)
      for (const Worker& worker : timeline.machines[m].workers) order.emplace_back(static_cast<int>(m), &worker);
  } else {
    for (const auto& [m, index] : timeline.stage_order)
      for (const Worker& worker : timeline.machines[m].workers)
        if (worker.index == index) order.emplace_back(m, &worker);
  }
  return order;
}

bool ResolveStageOrder(const std::vector<StageRef>& stages, const Timeline& timeline,
                       std::vector<std::pair<int, int>>* order, std::string* error) {
  for (const StageRef& stage : stages) {
    int machine = -1;
    for (size_t m = 0; m < timeline.machines.size(); ++m)
      if (timeline.machines[m].name == stage.machine) machine = static_cast<int>(m);
    bool found = false;
    if (machine >= 0)
      for (const Worker& w : timeline.machines[machine].workers) found |= w.index == stage.worker;
    if (!found) {
      *error = "--stage_order: '" + stage.text + "' is not MACHINE:WORKER of a log read";
      return false;
    }
    order->emplace_back(machine, stage.worker);
  }
  size_t workers = 0;
  for (const Machine& m : timeline.machines) workers += m.workers.size();
  if (order->size() != workers) {
    *error = "--stage_order names " + std::to_string(order->size()) + " of the " + std::to_string(workers) +
             " workers read; name each once";
    return false;
  }
  return true;
}

void ForEachHandOff(const Timeline& timeline, const std::function<void(const HandOff&)>& visit) {
  const auto order = WorkersInStageOrder(timeline);
  if (order.size() < 2) return;
  // Two neighbouring stages at a time: the hash maps of a run's jobs are
  // never all in memory together.
  std::map<std::string, int> type_ids;  // a handful of types
  Stage here = BuildStage(order[0].first, *order[0].second, type_ids);
  for (size_t s = 0; s + 1 < order.size(); ++s) {
    Stage next = BuildStage(order[s + 1].first, *order[s + 1].second, type_ids);
    // Visit in a fixed order (the sender stage's jobs by start), so the
    // trace's flow ids do not depend on hash order.
    std::vector<std::pair<const Job*, const Job*>> pairs;
    for (const auto& [key, job] : here.jobs) {
      const auto it = next.jobs.find(key);
      if (it != next.jobs.end()) pairs.emplace_back(job, it->second);
    }
    std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return StartsBefore(*a.first, *b.first); });
    for (const auto& [job, other] : pairs) {
      const int stage = static_cast<int>(s);
      if (DirectionOf(job->type) == Direction::kForward)
        visit({job, other, here.machine, next.machine, here.worker, next.worker, stage});
      else
        visit({other, job, next.machine, here.machine, next.worker, here.worker, stage});
    }
    here = std::move(next);
  }
}

}  // namespace jobviz
