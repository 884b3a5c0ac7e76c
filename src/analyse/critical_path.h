// A step's critical path (analyse/step_graph.h finds it in the step's
// graph) in the analysis' terms: its jobs in time order with the wait
// before each, by cause, and the paths' time by cause summed over steps.
// Definitions: docs/analysis.md ("Why the bubble is above the ideal").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyse/step_walks.h"
#include "model/model.h"
#include "model/time_value.h"

namespace jobviz {

// The critical paths' time by cause, summed over steps; with the time
// between steps, it adds up to the run's wall time from the first job of the
// first step to the last job of the last.
struct PathBreakdown {
  struct Compute {
    int stage = 0;
    std::string type;
    Nanos time = 0;
  };
  struct HandOff {
    int from = 0, to = 0;  // stages: from < to forward, from > to backward
    Nanos time = 0;
  };
  std::vector<Compute> compute;    // by stage, then type
  std::vector<HandOff> hand_offs;  // by link
  // Optimizers waiting for the gradients' all-reduce after the last pass of
  // their stage's replicas (or of every stage, under a global all-reduce):
  // communication outside the pipeline, which no what-if removes.
  Nanos all_reduce = 0;
  Nanos stall = 0;       // waits with the worker free and its inputs there
  Nanos step_start = 0;  // a path's first job starting after its step's first job
  Nanos step_gaps = 0;   // from one step's last job to the next step's first
  Nanos compute_total() const;
  Nanos hand_off_total() const;
  Nanos total() const;
};

// A job on a step's critical path, and the wait before it.
struct CriticalJob {
  std::uint32_t worker = 0, job = 0;  // the first peer's (Analysis::workers index, index into its jobs)
  int stage = 0, replica = 0;
  Name type;
  std::int64_t micro_batch = 0;
  Nanos start = 0, end = 0;
  Nanos hand_off = 0, all_reduce = 0, stall = 0;  // the wait before it, by cause
  int from_stage = -1;  // the stage that handed over (or whose last pass the all-reduce waited for), -1: none
};

struct CriticalPathStep {
  std::int64_t step = kNoStep;
  Nanos start = 0, end = 0;  // its first job's start, last job's end
  Nanos step_start = 0;      // before the path's first job
  std::vector<CriticalJob> jobs;  // in time order
};

// One step's critical path walked: the path, its time by cause, and every
// peer's job on it (what the traces mark).
struct StepPath {
  CriticalPathStep path;
  std::vector<PathBreakdown::Compute> compute;
  std::vector<PathBreakdown::HandOff> hand_offs;
  Nanos all_reduce = 0, stall = 0, step_start = 0;
  std::vector<MemberJob> marks;
};
StepPath WalkCriticalPath(const StepGraph& graph, const GraphLanes& lanes, std::int64_t step);

}  // namespace jobviz
