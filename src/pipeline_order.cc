#include "pipeline_order.h"

#include <algorithm>
#include <set>

namespace jobviz {

Direction DirectionOf(const std::string& type) {
  if (type.rfind("forward", 0) == 0) return Direction::kForward;
  if (type.rfind("backward", 0) == 0 && type.rfind("backward_w", 0) != 0) return Direction::kBackward;
  return Direction::kOther;
}

namespace {

struct Stage {
  int machine;
  std::map<std::tuple<std::string, std::int64_t, int>, const Job*> jobs;  // (type, micro-batch, occurrence)
};

std::vector<Stage> StagesInOrder(const Timeline& timeline) {
  std::vector<std::pair<int, const Worker*>> order;
  if (timeline.stage_order.empty()) {
    for (size_t m = 0; m < timeline.machines.size(); ++m)
      for (const Worker& worker : timeline.machines[m].workers) order.emplace_back(static_cast<int>(m), &worker);
  } else {
    for (const auto& [m, index] : timeline.stage_order)
      for (const Worker& worker : timeline.machines[m].workers)
        if (worker.index == index) order.emplace_back(m, &worker);
  }
  std::vector<Stage> stages;
  for (const auto& [m, worker_ptr] : order) {
      const Worker& worker = *worker_ptr;
      Stage stage{m, {}};
      std::map<std::pair<std::string, std::int64_t>, int> seen;
      for (const Job& job : worker.jobs) {  // sorted by start
        if (DirectionOf(job.type) == Direction::kOther) continue;
        const int occurrence = seen[{job.type, job.micro_batch}]++;
        stage.jobs[{job.type, job.micro_batch, occurrence}] = &job;
      }
      stages.push_back(std::move(stage));
    }
  return stages;
}

}  // namespace

bool ParseStageOrder(const std::string& text, const Timeline& timeline, std::vector<std::pair<int, int>>* order,
                     std::string* error) {
  std::set<std::pair<int, int>> seen;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t comma = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, comma - begin);
    begin = comma + 1;
    const size_t colon = item.rfind(':');
    int machine = -1, worker = -1;
    if (colon != std::string::npos) {
      for (size_t m = 0; m < timeline.machines.size(); ++m)
        if (timeline.machines[m].name == item.substr(0, colon)) machine = static_cast<int>(m);
      try {
        worker = std::stoi(item.substr(colon + 1));
      } catch (...) {
        worker = -1;
      }
    }
    bool found = false;
    if (machine >= 0)
      for (const Worker& w : timeline.machines[machine].workers) found |= w.index == worker;
    if (!found) {
      *error = "--stage_order: '" + item + "' is not MACHINE:WORKER of a log read";
      return false;
    }
    if (!seen.insert({machine, worker}).second) {
      *error = "--stage_order: '" + item + "' given twice";
      return false;
    }
    order->emplace_back(machine, worker);
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
  const std::vector<Stage> stages = StagesInOrder(timeline);
  for (size_t s = 0; s + 1 < stages.size(); ++s) {
    const Stage& here = stages[s];
    const Stage& next = stages[s + 1];
    for (const auto& [key, job] : here.jobs) {
      const auto it = next.jobs.find(key);
      if (it == next.jobs.end()) continue;
      if (DirectionOf(std::get<0>(key)) == Direction::kForward)
        visit({job, it->second, here.machine, next.machine});
      else
        visit({it->second, job, next.machine, here.machine});
    }
  }
}

}  // namespace jobviz
