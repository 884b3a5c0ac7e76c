// Decides where each worker sits (model/topology.h) from the first source
// that says it, in this order: --topology (or --stage_order), the
// HybridParallelInfo lines Paddle prints, the topology lines libjobviz
// writes, inference from the jobs themselves; else every worker is its own
// stage, as before. Sources that disagree are reported, never silently
// overridden (docs/analysis.md, "Hybrid parallelism").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/topology.h"

namespace jobviz {

struct TopologyRequest {
  std::optional<AxisValues> degrees;     // --topology
  std::string degrees_text;              // as given, for messages
  std::vector<ParallelAxis> rank_order;  // --rank-order; empty: Paddle's
  bool none = false;                     // --topology none: every worker its own stage, as before
};

struct TopologyOutcome {
  std::vector<std::string> warnings;
  std::string usage_error;  // the user's own option cannot fit the logs: exit 2
};

// Sets Timeline::topology and every Worker::role. With Timeline::stage_order
// set (--stage_order), that order is one pipeline and nothing else is read.
// Inference (when nothing says where workers sit) runs on up to `threads`.
TopologyOutcome ResolveTopology(const TopologyRequest& request, Timeline* timeline, int threads = 1);

// The global rank the launcher gives a worker: machine index x workers per
// machine + worker index when every machine has workers 0..W-1; else the
// worker's position in machine-then-worker order.
std::vector<std::int64_t> LauncherRanks(const Timeline& timeline);

}  // namespace jobviz
