// The fields of Paddle's HybridParallelInfo line after "rank_id: N":
// "mp_degree: 2, sharding_degree: 4, ..., pp_group: [0, 8, 16, 24], sep:group: None, ..."
// in any order and number (three published forms in docs/workerlog-format.md).
// A rank's coordinate along an axis is its position in that axis's group;
// an axis with neither group nor degree has degree 1.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/topology.h"

namespace jobviz {

// False with a reason when the fields cannot place `rank` (its own group
// does not hold it, a group disagrees with its degree, a group needed is not
// a list of ranks).
// An axis may also be given as a coordinate, `<axis>_rank: N` (tp_rank for
// mp), as libjobviz writes the line; *by_coordinates is then set.
bool ParseHybridFields(std::string_view fields, std::int64_t rank, ParallelPlace* place, bool* by_coordinates,
                       std::string* error);

}  // namespace jobviz
