// The second half of the stop report (analyse/stop_report.h): with every
// lane placed, who stopped first, who waited on whom, how each log ends,
// and the sentence that says it.
#pragma once

#include "analyse/step_graph.h"
#include "analyse/stop_report.h"

namespace jobviz {

// How each worker's log ends (StopReport::workers), whether or not the run
// stopped. `last_job_ends`: each worker's LastJobEnd (UnfinishedSteps has
// them), or empty to take them here.
void EndWorkers(const std::vector<const Worker*>& workers, const std::vector<Nanos>& last_job_ends, StopReport* report);

// Fills the report's waiting counts, kind, first lane and sentence (after EndWorkers).
void BlameStop(const Timeline& timeline, const GraphLanes& graph, StopOptions options, StopReport* report);

}  // namespace jobviz
