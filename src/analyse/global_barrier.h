// Whether a run's optimizers all wait for one global all-reduce (Paddle's
// gradient-norm clipping over every rank), read from its finished steps:
// the stop report says so, as the step graph models it (analyse/step_graph.h).
#pragma once

#include "analyse/step_graph.h"
#include "model/model.h"

namespace jobviz {

// Every optimizer of a finished step starting together, stages apart, is a
// barrier all stages join (a global gradient-norm all-reduce). Judged on
// each machine that holds two stages or more, on its one clock: machines'
// clocks may be off by more than the optimizers' spread (docs/clock-alignment.md).
// Only where no machine does, across machines.
bool OptimizersJoinGlobalBarrier(const Timeline& timeline, const GraphLanes& graph);

}  // namespace jobviz
