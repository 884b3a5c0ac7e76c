// A what-if's replay (analyse/bottleneck.h, WhatIfRun) as the traces and
// the HTML report draw it beside the measured run: one more row group, a
// process "what-if: <what changed>", holding a copy of each worker whose
// jobs the replay moved, with those jobs at their replayed times.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "analyse/bottleneck.h"
#include "emit/trace_rows.h"
#include "model/model.h"

namespace jobviz {

struct WhatIfRows {
  std::string title;  // "what-if: every hand-off without latency: 31.02 ms per step (-8.0%)"
  std::vector<std::pair<size_t, Worker>> workers;  // (machine index, the worker with its replayed jobs only)
  bool empty() const { return workers.empty(); }
};

// "what-if: every hand-off without latency: 31.02 ms per step (-8.0%)": the
// drawn what-if's name wherever it is drawn ("" when none is).
std::string WhatIfTitle(const Bottleneck* bottleneck);

// Empty when `bottleneck` (may be null) holds no drawn what-if.
WhatIfRows MakeWhatIfRows(const Timeline& timeline, const Bottleneck* bottleneck);

// Appends the what-if's row group after `groups`, its rows numbered on
// from theirs; does nothing when `what_if` is empty.
void AddWhatIfGroup(const WhatIfRows& what_if, std::vector<RowGroup>* groups);

}  // namespace jobviz
