// What a hybrid-parallel topology adds to the analysis: a table per pipeline
// stage (all replicas and tensor-parallel peers of the stage together), the
// tensor-parallel peer that runs behind the others, and the replica that
// finishes its step last (the one the gradients' all-reduce waits for).
// Definitions in docs/analysis.md ("Hybrid parallelism").
#pragma once

#include <vector>

#include "model/model.h"
#include "model/time_value.h"

namespace jobviz {

struct WorkerAnalysis;
struct StepWindow;

struct PassStats {
  size_t count = 0;
  Nanos mean = 0, p95 = 0;
};

struct StageAnalysis {
  int stage = 0;
  int workers = 0;
  PassStats forward, backward;  // forward*, backward* (and backward_b*) jobs of the stage's workers
  Nanos busy = 0, idle = 0;     // sums over the stage's workers and steps
  double bubble_ratio = 0;
};

// A tensor-parallel peer whose jobs start later than its peers' (matched by
// type, micro-batch and occurrence): the median lag behind the earliest peer.
struct LaggingPeer {
  int machine = 0, worker = 0;
  std::string name;
  WorkerRole role;
  Nanos behind = 0;  // median over its jobs
  size_t jobs = 0;   // jobs compared
};

// Per step, the replica whose last forward or backward job ended last, and
// how far behind the median replica's last end.
struct LastReplica {
  std::int64_t step = kNoStep;
  int replica = 0;
  Nanos late_by = 0;
};

// Peers lagging by more than this (or 5% of their median job) are reported:
// peers meet in collectives inside every job, so they start within microseconds.
inline constexpr Nanos kPeerLagFloor = 20'000;

// Each stage on one of up to `threads` threads (`workers` in AllWorkers order).
std::vector<StageAnalysis> AnalyzeStages(const Timeline& timeline, const std::vector<WorkerAnalysis>& workers,
                                         int threads = 1);
// Each (replica, stage)'s peers on up to `threads` threads.
std::vector<LaggingPeer> FindLaggingPeers(const Timeline& timeline, int threads = 1);
// Each worker's step ends on up to `threads` threads.
std::vector<LastReplica> FindLastReplicas(const Timeline& timeline, const std::vector<StepWindow>& steps,
                                          int threads = 1);

}  // namespace jobviz
