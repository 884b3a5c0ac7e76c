// The pipelines a step graph is built over: every stage of every replica as
// a lane of its tensor-parallel peers, with its neighbours in the pipeline
// and its stage in the other replicas (analyse/step_graph.h).
#pragma once

#include <cstdint>
#include <vector>

#include "model/model.h"

namespace jobviz {

// The workers of one stage of one pipeline replica: its tensor-parallel
// peers, which run each job together (a collective inside every job), so
// the graph takes them as one.
struct StageLane {
  int replica = 0, stage = 0;
  std::vector<std::uint32_t> workers;  // indices into GraphLanes::workers
  int before = -1, after = -1;         // lanes of stage - 1 and stage + 1 of the replica; -1: not read
  int first = -1, last = -1;           // the replica's first and last stage (interleaved wrap-around)
};

struct GraphLanes {
  std::vector<const Worker*> workers;  // every worker, machine then worker order (as Analysis::workers)
  std::vector<StageLane> lanes;        // by replica, then stage
  std::vector<int> lane_of;            // per worker; -1: in no pipeline (its stage unknown)
  std::vector<int> stage_rank;         // per lane: its stage's place among the stages there are
  int stage_count = 0;
  std::vector<std::vector<int>> stage_lanes;  // per stage rank: its lane in every replica, in lane order
  // The lanes of a lane's stage in every replica, itself among them: one
  // list a stage, not one a lane (at 1,024 replicas a lane's list of the
  // others was 1,023 ints: 67 MB, built by every analysis that made lanes).
  const std::vector<int>& SameStage(int lane) const { return stage_lanes[static_cast<size_t>(stage_rank[lane])]; }
  bool HasOtherReplicas(int lane) const { return SameStage(lane).size() > 1; }
};

// The lanes of a timeline's pipelines (align/pipeline_order.h PipelineChains).
GraphLanes MakeGraphLanes(const Timeline& timeline);

}  // namespace jobviz
