#include "pipeline_order.h"

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
  std::vector<Stage> stages;
  for (size_t m = 0; m < timeline.machines.size(); ++m)
    for (const Worker& worker : timeline.machines[m].workers) {
      Stage stage{static_cast<int>(m), {}};
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
