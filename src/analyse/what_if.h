// The what-ifs: the step graphs replayed with one cause removed
// (analyse/bottleneck.h runs them), what each gains, the causes worth fixing,
// and a what-if's replay as drawn beside the measured run. Definitions:
// docs/analysis.md ("What-ifs").
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "model/time_value.h"

namespace jobviz {

enum class WhatIfKind { kBalancedStages, kFreeHandOffs, kNoOutliers, kNoStall, kNoSlowWorkers, kNoStepGaps, kAll, kCount };
const char* WhatIfKey(WhatIfKind kind);  // "balanced_stages", ...

struct WhatIf {
  WhatIfKind kind = WhatIfKind::kAll;
  std::string change;     // what the replay changed, in words
  bool applies = false;   // false: there is nothing to change (one stage, no slow worker, ...)
  Nanos step_time = 0;    // predicted, mean per step
  double bubble_ratio = 0;
  Nanos saved = 0;        // per step, against the replayed run (steps and the gaps between)
  double gain = 0;        // saved as a share of the replayed run's time per step
};

// A cause worth fixing: a what-if whose gain is at least kCauseFloor.
struct Cause {
  WhatIfKind kind = WhatIfKind::kAll;
  std::string text;  // "stage 2 is the bottleneck: balancing it would save 8.1 ms per step (-19.0%)"
  Nanos saved = 0;
  double gain = 0;
};
inline constexpr double kCauseFloor = 0.03;

// A what-if's replay as drawn beside the measured run: every job of a step
// graph at its replayed start and end (tensor-parallel peers together, as
// the replay runs them), the steps one after the other as the what-if's
// predicted run time counts them: each step's replay, then the measured
// time before the next step unless the what-if removes it. So the drawn
// run ends `WhatIf::saved` x steps before the replayed one would.
struct ReplayedJob {
  std::uint32_t job = 0;  // index into its worker's jobs
  Nanos start = 0, end = 0;
};
struct WhatIfRun {
  WhatIfKind kind = WhatIfKind::kAll;
  Nanos start = 0, end = 0;                     // the first step's start, the last job's replayed end
  std::vector<std::vector<ReplayedJob>> jobs;  // per worker (Analysis::workers order), by start
};
// Which what-if's replay to keep for drawing.
struct WhatIfDrawing {
  bool draw = false;
  std::optional<WhatIfKind> kind;  // empty: the top cause's (none drawn when there is no cause)
  // The top cause's is drawn for runs of up to this many jobs (a copy of
  // every job doubles a trace); a named one always.
  size_t max_jobs = std::numeric_limits<size_t>::max();
};

}  // namespace jobviz
