// The second half of the stop report (analyse/stop_report.h): with every
// lane placed, who stopped first, who waited on whom, how each log ends,
// and the sentence that says it.
#pragma once

#include "analyse/step_graph.h"
#include "analyse/stop_report.h"

namespace jobviz {

// Fills the report's waiting counts, workers, kind, first lane and sentence.
void BlameStop(const Timeline& timeline, const GraphLanes& graph, StopReport* report);

}  // namespace jobviz
