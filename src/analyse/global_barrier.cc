#include "analyse/global_barrier.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "analyse/schedule.h"
#include "model/name.h"

namespace jobviz {

bool OptimizersJoinGlobalBarrier(const Timeline& timeline, const GraphLanes& graph) {
  constexpr int kAllMachines = -1;
  // (machine or kAllMachines, step) -> earliest, latest optimizer start
  std::map<std::pair<int, std::int64_t>, std::pair<Nanos, Nanos>> spread;
  std::vector<Nanos> passes;
  std::map<int, std::set<int>> stages;  // machine or kAllMachines -> its stages
  for (size_t l = 0; l < graph.lanes.size(); ++l) {
    if (graph.lanes[l].workers.empty()) continue;
    const Worker& w = *graph.workers[graph.lanes[l].workers.front()];
    stages[kAllMachines].insert(graph.lanes[l].stage);
    stages[w.machine].insert(graph.lanes[l].stage);
    std::map<std::int64_t, std::pair<bool, Nanos>> first_after;  // step -> (a pass seen, first non-pass after)
    for (const Job& job : w.jobs) {
      if (job.step == kNoStep) continue;
      auto& [pass_seen, start] = first_after[job.step];
      if (IsPass(job.type)) {
        pass_seen = true;
        start = 0;
        if (passes.size() < 4096) passes.push_back(job.end - job.start);
      } else if (pass_seen && start == 0) {
        start = job.start;
      }
    }
    for (const auto& [step, entry] : first_after) {
      if (entry.second == 0) continue;
      for (const int machine : {kAllMachines, w.machine}) {
        auto [it, inserted] = spread.try_emplace({machine, step}, entry.second, entry.second);
        it->second.first = std::min(it->second.first, entry.second);
        it->second.second = std::max(it->second.second, entry.second);
      }
    }
  }
  if (stages[kAllMachines].size() < 2 || spread.empty() || passes.empty()) return false;
  std::nth_element(passes.begin(), passes.begin() + static_cast<std::ptrdiff_t>(passes.size() / 2), passes.end());
  const Nanos tolerance = std::max<Nanos>(50'000, passes[passes.size() / 2] / 4);
  std::vector<int> judges;
  for (const auto& [machine, its] : stages)
    if (machine != kAllMachines && its.size() >= 2) judges.push_back(machine);
  if (judges.empty()) judges.push_back(kAllMachines);
  size_t checked = 0;
  for (const StepSpan& span : timeline.steps) {
    if (span.unfinished) continue;
    for (const int machine : judges) {
      const auto it = spread.find({machine, span.step});
      if (it == spread.end()) continue;
      if (it->second.second - it->second.first > tolerance) return false;
      ++checked;
    }
  }
  return checked > 0;
}


}  // namespace jobviz
