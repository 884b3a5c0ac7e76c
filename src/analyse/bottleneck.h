// Why the bubble is above the ideal: each step's critical path by cause,
// what-if replays of the step graphs (analyse/step_graph.h) with one cause
// removed, the causes ranked by what removing them gains, and the workers
// that are slower than their tensor-parallel peers and replicas.
// Definitions, the replay model and its limits: docs/analysis.md ("Why the
// bubble is above the ideal").
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "analyse/critical_path.h"
#include "analyse/slow_workers.h"
#include "analyse/what_if.h"
#include "model/model.h"
#include "model/time_value.h"

namespace jobviz {

struct StepWindow;

struct Bottleneck {
  bool ran = false;            // false: no pipeline job in any step graph
  size_t steps = 0;
  Nanos measured_step = 0;     // mean, first job to last job
  Nanos replayed_step = 0;     // mean, the replay with nothing removed
  Nanos step_gap = 0;          // mean time between steps
  double replayed_bubble = 0;  // the bubble of the replay with nothing removed, as the what-ifs measure it
  double replay_error = 0;     // the largest |replayed - measured| / measured of a step
  size_t contradicted = 0;     // hand-offs the clocks contradict (left out)
  size_t overlaps = 0;         // jobs that start before their stage's previous job ended
  bool per_worker_only = false;  // no peers or replicas: a slow worker shows as a slow stage
  size_t barrier_steps = 0;      // steps whose optimizers all waited for a global all-reduce
  PathBreakdown path;
  std::vector<WhatIf> what_if;  // every WhatIfKind, in order
  std::vector<Cause> causes;    // ranked
  std::vector<SlowStage> slow_stages;  // slowest first
  int slowest_stage = -1;              // the most job time per worker; what balanced_stages balances
  double slowest_stage_factor = 1;     // its job time over the other stages' for the same jobs
  // Per worker (Analysis::workers order): its pass jobs' time at its own
  // medians over the same jobs at its reference's (the median of its
  // stage's other workers, peers and replicas); 0: no other worker to compare.
  std::vector<double> speed;
  size_t outlier_count = 0;
  std::vector<OutlierJob> outliers;    // the worst few (most time above the median), worst first
  std::vector<CriticalPathStep> critical_paths;
  // Per worker (Analysis::workers order), the indices of its jobs on a
  // critical path, sorted: what the traces and the HTML report mark.
  std::vector<std::vector<std::uint32_t>> marks;
  std::optional<WhatIfRun> drawn_what_if;  // when asked (WhatIfDrawing) and there is one to draw
};

// Worker `worker`'s speed (Analysis::workers order; Bottleneck::speed), 0 when none.
double SpeedOf(const Bottleneck& b, size_t worker);

// The measured time per step (its steps and the gaps between them), and
// what a what-if predicts for it: what an evaluation compares with the run
// without the cause (tools/eval_why.cc).
double MeasuredWallPerStep(const Bottleneck& b);
double PredictedWallPerStep(const Bottleneck& b, WhatIfKind kind);

// On up to `threads` threads; the result does not depend on it.
Bottleneck AnalyzeBottleneck(const Timeline& timeline, const std::vector<StepWindow>& steps, int threads,
                             std::vector<SlowWorker>* slow_workers, const WhatIfDrawing& drawing = {});

// The critical paths only (critical_paths and marks; no speeds, no
// replays): what the traces mark when nothing else needs the analysis. The
// same paths AnalyzeBottleneck finds.
Bottleneck FindCriticalPaths(const Timeline& timeline, const std::vector<StepWindow>& steps, int threads);

// Whether job `job` of worker `worker` (Analysis::workers order) is on a critical path.
bool OnCriticalPath(const Bottleneck& bottleneck, size_t worker, std::uint32_t job);

}  // namespace jobviz
