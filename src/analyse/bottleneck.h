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

#include "model/model.h"
#include "model/time_value.h"

namespace jobviz {

struct StepWindow;

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

struct SlowJobType {
  std::string type;
  double factor = 1;          // its median duration over the reference's
  size_t slower = 0, jobs = 0;  // jobs more than half kSlowFactor slower than the reference, of jobs compared
};
struct SlowWorker {
  int machine = 0, worker = 0;
  std::string name;
  WorkerRole role;
  std::string compared_with;  // "its tensor-parallel peers", "the other replicas", "its peers and the other replicas"
  double factor = 1;          // the largest of its types'
  std::vector<SlowJobType> types;
};
// A job far slower than its worker's other jobs of its type: more than
// kOutlierFactor times their median (a hiccup: a page fault storm, a
// preempted host thread, a retried collective).
inline constexpr double kOutlierFactor = 1.5;
struct OutlierJob {
  std::string worker;      // "machine2 worker 5"
  std::int64_t step = kNoStep;
  std::string type;
  std::int64_t micro_batch = 0;
  Nanos duration = 0, median = 0;  // the job's, and its worker's median of the type
};

// A stage whose jobs take longer than the other stages' jobs of the same
// types (its slow workers left out): an unbalanced split, fixed by moving
// layers, where a slow worker is a bad GPU or host.
struct SlowStage {
  int stage = 0;
  double factor = 1;  // its job time over the same jobs at the other stages' median speed
};
// A worker is slow when a job type's median is this much above its
// reference's, with at least kSlowConsistency of its jobs of that type
// more than half that much above (a steady slowdown, not a few outliers).
// A stage is slow when its job time is this much above the other stages'.
// Measured against randomized runs (tools/eval_why.cc, docs/analysis.md).
inline constexpr double kSlowFactor = 1.07;
inline constexpr double kSlowConsistency = 0.75;

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
