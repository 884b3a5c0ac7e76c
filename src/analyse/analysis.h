// The numbers a timeline implies: step durations, per-worker busy and idle
// time and bubble ratio, job-type statistics, the schedule with its ideal
// bubble, and why the bubble is above it (definitions in docs/analysis.md).
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analyse/bottleneck.h"
#include "analyse/hybrid_analysis.h"
#include "analyse/schedule.h"
#include "analyse/stop_report.h"
#include "model/model.h"
#include "model/time_value.h"

namespace jobviz {

struct StepWindow {
  std::int64_t step = kNoStep;  // kNoStep: the whole run, when no steps were found
  Nanos start = 0, end = 0;     // the step as the traces draw it (Timeline::steps)
  Nanos duration() const { return SaturatingSub(end, start); }
};

struct WorkerStep {
  std::int64_t step = kNoStep;
  Nanos busy = 0, idle = 0;  // union of the worker's jobs in the window; window minus busy
};

struct WorkerAnalysis {
  int machine = 0, worker = 0;
  std::string name;  // "machine0 worker 1"
  WorkerRole role;   // its stage, peer and replica when the topology is known
  Nanos busy = 0, idle = 0, windows = 0;  // sums over steps
  double bubble_ratio = 0;                // idle / windows
  std::vector<WorkerStep> steps;
};

struct TypeAnalysis {
  size_t count = 0;
  Nanos total = 0, mean = 0, p50 = 0, p95 = 0;
};

struct Analysis {
  std::vector<StepWindow> steps;
  std::vector<WorkerAnalysis> workers;
  double bubble_ratio = 0;  // whole pipeline: sum of idle / sum of windows
  int stages = 0, micro_batches = 0;
  ScheduleFit schedule;     // recognised from job types and order, with its ideal bubble
  std::map<std::string, TypeAnalysis> job_types;
  // Why the bubble is above the ideal: critical paths, what-if replays,
  // causes ranked (analyse/bottleneck.h); the workers slower than their
  // peers and replicas.
  Bottleneck bottleneck;
  std::vector<SlowWorker> slow_workers;
  // What is wrong and what to do, in plain words (analyse/cause_text.h):
  // the first line of every report of a finished run.
  std::string verdict;
  // With a hybrid topology (Topology::hybrid()): the stages, and what only
  // replicas and tensor-parallel peers can show (analyse/hybrid_analysis.h).
  Topology topology;
  std::vector<StageAnalysis> stage_table;
  std::vector<LaggingPeer> lagging_peers;
  std::vector<LastReplica> last_replicas;
  // Where a run that did not finish stopped (analyse/stop_report.h): made
  // as soon as the steps are found (commands/stages.h FindRunSteps), since
  // the report on stderr opens with it; Analyze leaves it as it was.
  StopReport stop;
};

// The step windows the analysis uses (Analysis::steps).
std::vector<StepWindow> StepWindowsOf(const Timeline& timeline, int threads);

// On up to `threads` threads (0: one per core); the result does not depend on it.
// With `drawing`, also the chosen what-if's replay job by job (Bottleneck::drawn_what_if).
Analysis Analyze(const Timeline& timeline, int threads = 1, const WhatIfDrawing& drawing = {});

// Nearest-rank percentile (p in 0..100) of sorted values; 0 when empty.
// The one definition behind the summary and --fail-on aggregates.
// Its index among `count` sorted values (count > 0).
inline size_t PercentileIndex(size_t count, double p) {
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(count)));
  return std::clamp<size_t>(rank, 1, count) - 1;
}
template <typename T>
size_t PercentileIndex(const std::vector<T>& values, double p) {
  return PercentileIndex(values.size(), p);
}
template <typename T>
T Percentile(const std::vector<T>& sorted, double p) {
  return sorted.empty() ? T{} : sorted[PercentileIndex(sorted, p)];
}
// The same, from unsorted values (partly reordered): no full sort.
template <typename T>
T PercentileOf(std::vector<T>& values, double p) {
  if (values.empty()) return T{};
  const auto at = values.begin() + static_cast<std::ptrdiff_t>(PercentileIndex(values, p));
  std::nth_element(values.begin(), at, values.end());
  return *at;
}
// Two of them, `low` <= `high`, from unsorted values: the second selection
// runs only over the values the first left after its own, which are the
// ones ranked after it.
template <typename T>
std::pair<T, T> PercentilesOf(std::vector<T>& values, double low, double high) {
  if (values.empty()) return {T{}, T{}};
  const auto at_low = values.begin() + static_cast<std::ptrdiff_t>(PercentileIndex(values, low));
  const auto at_high = values.begin() + static_cast<std::ptrdiff_t>(PercentileIndex(values, high));
  std::nth_element(values.begin(), at_low, values.end());
  if (at_high > at_low) std::nth_element(at_low + 1, at_high, values.end());  // leaves *at_low where it is
  return {*at_low, *at_high};
}

// The union of [start, end) intervals as disjoint intervals, sorted.
std::vector<std::pair<Nanos, Nanos>> MergeIntervals(std::vector<std::pair<Nanos, Nanos>> intervals);

// Total length of the union of [start, end) intervals.
Nanos UnionLength(std::vector<std::pair<Nanos, Nanos>> intervals);

}  // namespace jobviz
