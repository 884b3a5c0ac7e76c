#include "analyse/graph_lanes.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

#include "align/pipeline_order.h"

namespace jobviz {

GraphLanes MakeGraphLanes(const Timeline& timeline) {
  GraphLanes g;
  std::map<const Worker*, std::uint32_t> index;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) {
      index[&worker] = static_cast<std::uint32_t>(g.workers.size());
      g.workers.push_back(&worker);
    }
  g.lane_of.assign(g.workers.size(), -1);
  // Chains are per (replica, peer); a lane joins the peers of one stage.
  const std::vector<PipelineChain> chains = PipelineChains(timeline);
  std::map<std::pair<int, int>, int> lane_at;  // (replica, stage) -> lane
  for (const PipelineChain& chain : chains)
    for (const int stage : chain.numbers) lane_at.try_emplace({chain.replica, stage}, -1);
  std::map<int, int> stage_rank;
  for (auto& [key, lane] : lane_at) {
    lane = static_cast<int>(g.lanes.size());
    g.lanes.push_back({key.first, key.second, {}, -1, -1, -1, -1});
    stage_rank.try_emplace(key.second, 0);
  }
  for (auto& [stage, rank] : stage_rank) rank = g.stage_count++;
  for (const StageLane& lane : g.lanes) g.stage_rank.push_back(stage_rank.at(lane.stage));
  for (const PipelineChain& chain : chains)
    for (size_t k = 0; k < chain.stages.size(); ++k) {
      const int lane = lane_at.at({chain.replica, chain.numbers[k]});
      const std::uint32_t w = index.at(chain.stages[k].second);
      g.lanes[lane].workers.push_back(w);
      g.lane_of[w] = lane;
    }
  // Neighbours; the first and last stage of a replica only when none between is missing.
  std::map<int, std::vector<int>> by_replica;
  for (size_t l = 0; l < g.lanes.size(); ++l) by_replica[g.lanes[l].replica].push_back(static_cast<int>(l));
  g.stage_lanes.resize(static_cast<size_t>(g.stage_count));
  for (size_t l = 0; l < g.lanes.size(); ++l) g.stage_lanes[static_cast<size_t>(g.stage_rank[l])].push_back(static_cast<int>(l));
  for (const auto& [replica, lanes] : by_replica) {  // sorted by stage (lane_at's order)
    bool contiguous = true;
    for (size_t k = 0; k + 1 < lanes.size(); ++k) {
      if (g.lanes[lanes[k + 1]].stage == g.lanes[lanes[k]].stage + 1) {
        g.lanes[lanes[k]].after = lanes[k + 1];
        g.lanes[lanes[k + 1]].before = lanes[k];
      } else {
        contiguous = false;
      }
    }
    for (int l : lanes)
      if (contiguous) {
        g.lanes[l].first = lanes.front();
        g.lanes[l].last = lanes.back();
      }
  }
  return g;
}

}  // namespace jobviz
