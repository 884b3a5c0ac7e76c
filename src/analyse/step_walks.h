// Walks over a step graph (analyse/step_graph.h): its critical path, back
// from the job that ended last, and its replays with causes removed
// (analyse/bottleneck.h runs them as what-ifs).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "analyse/step_graph.h"

namespace jobviz {

// A piece of the critical path, in time order: a job, or the wait before it.
// kAllReduce: an optimizer's wait for the gradients' all-reduce, after the
// last pass of the replica (or, under a global all-reduce, of the lane) that
// ended last.
enum class PathPartKind : std::uint8_t { kJob, kHandOff, kAllReduce, kStall, kStepStart };
struct PathPart {
  PathPartKind kind = PathPartKind::kJob;
  std::int32_t job = 0;        // the StageJob (for a wait: the job that waited)
  std::int32_t from = -1;      // kHandOff, kAllReduce: the sending StageJob
  Nanos length = 0;
};

// Walks back from the job that ended last; the parts add up to end - start.
std::vector<PathPart> CriticalPath(const StepGraph& graph);

// Replays: every job starts when its lane and its inputs are ready (plus
// its stall), in measured order; an optimizer's all-reduce wait is kept as
// measured (it is no hand-off). Up to kReplays of them run together in one
// pass over the graph, each with its own durations and without hand-off
// latency or stalls when asked; running them together reads the graph once.
constexpr size_t kReplays = 8;
struct ReplaySet {
  size_t count = 1;
  // Per StageJob, kReplays each (job-major: one cache line per job): replay
  // k's duration of job j is durations[j * kReplays + k]. Empty: as measured.
  std::span<const Nanos> durations;
  std::array<bool, kReplays> free_hand_offs{}, no_stall{};
};
struct ReplayResult {
  Nanos step_time = 0;  // last end after the step's start
  Nanos busy = 0;       // job durations x peers: busy time of the step's workers
};
struct ReplayScratch {
  std::vector<Nanos> end;  // per job and group, kReplays each; a group's: its latest sender's
};
// The results of replays 0 .. set.count - 1.
std::array<ReplayResult, kReplays> Replay(const StepGraph& graph, const ReplaySet& set, ReplayScratch& scratch);

}  // namespace jobviz
