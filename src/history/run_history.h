// `jobviz history`: each run beside the median of the runs before it
// (docs/history.md): the K runs before it of the same name (--run-name: one
// configuration, run after run) that passed the same filters (--tag).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "history/ledger_store.h"

namespace jobviz {

struct HistoryOptions {
  size_t last = 20;     // runs shown, the latest
  size_t compare = 10;  // K: runs before each that its median is taken over
  // A regression: step time this much over the median (a share), or the
  // bubble this many points over it.
  double step_regression = 0.05;
  double bubble_regression = 0.02;
};

struct HistoryLine {
  const LedgerRun* run = nullptr;
  size_t before = 0;  // runs the median was taken over (0: the first run, nothing to compare)
  std::optional<double> median_step_us, median_bubble;
  std::optional<double> step_change;    // (step - median) / median
  std::optional<double> bubble_change;  // bubble - median, in points of the ratio
  bool step_regressed = false, bubble_regressed = false;
  bool stopped = false;  // did not finish its last step
};

// The last `options.last` of `runs` (oldest first, as LoadRuns gives them),
// each with its change against the median of up to `options.compare` runs
// of its name before it (runs that stopped are left out of the medians: their step
// times say where they stopped, not how fast they ran).
std::vector<HistoryLine> CompareRuns(const std::vector<LedgerRun>& runs, const HistoryOptions& options);

}  // namespace jobviz
