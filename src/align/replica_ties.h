// Machines that no hand-off ties to the reference clock: under data
// parallelism laid out one (replica, stage) per machine, each replica's
// pipeline is a set of machines of its own. Pipeline order aligns each such
// set within itself; the gradients' all-reduce ties the sets together: no
// stage's optimizer starts before every replica's last pass of that stage
// has ended (docs/clock-alignment.md, "Replicas on other machines").
#pragma once

#include <string>
#include <vector>

#include "align/clock_align.h"
#include "model/model.h"

namespace jobviz {

// `component[m]`: the set of machines `m` was aligned with (by hand-offs),
// its offset in `clocks` relative to that set's first machine; the
// reference's set is already on the reference clock. Shifts every other
// set that the all-reduce ties to an aligned one (method kReduce), and says
// in `warnings` how far each may be off, or that it could not be tied.
void TieReplicas(const Timeline& timeline, const std::vector<int>& component, int reference,
                 std::vector<MachineClock>* clocks, std::vector<std::string>* warnings);

}  // namespace jobviz
