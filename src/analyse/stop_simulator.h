// A simulator of training runs that stop: hybrid 1F1B runs (pp x mp x dp,
// the run simulator's layout, analyse/run_simulator.h) in which one worker
// (with its tensor-parallel peers, which block inside the same job), one
// replica's stage or one machine stops at a random moment, and every other
// worker goes on exactly as far as its dependencies allow before blocking:
// hand-offs, the gradients' all-reduce of each stage's replicas, or a
// global all-reduce before every optimizer (gradient-norm clipping). Or the
// logs are cut at one moment for all, or the run finishes. What the stop
// report is measured against (analyse/stop_report.h, docs/analysis.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyse/run_simulator.h"
#include "model/model.h"

namespace jobviz::sim {

enum class StopKind { kFinished, kCut, kWorker, kStage, kMachine };
const char* StopKindName(StopKind kind);

struct StopRun {
  SimRun run;
  StopKind stop = StopKind::kWorker;
  bool barrier = false;    // every optimizer waits for every stage and replica
  bool in_flight = false;  // a stopped worker's log shows the job it hangs in (the shim's watchdog)
  // Every live log ends with a glog-stamped line at the kill (the launcher's
  // or NCCL's last words), a dead worker's when it died; false: logs end
  // with their last job line.
  bool stamps = true;
  std::uint64_t seed = 1;
};

// A place the truth names: a (replica, stage), with its last finished job
// and the next one it never finished.
struct TruePlace {
  int replica = 0, stage = 0;
  Name last_type, next_type;
  std::int64_t last_micro_batch = -1, next_micro_batch = -1;
  std::int64_t last_step = kNoStep, next_step = kNoStep;
};

struct StopTruth {
  bool stopped = false;               // a stage stopped first (not finished, not cut for all)
  std::vector<TruePlace> first;       // the places that stopped first (a machine: several)
  std::vector<int> dead_workers;      // global ranks whose process died or hung
  Nanos stop_time = 0, kill_time = 0;
};

// Workers are ranks laid out as Simulate lays them (4 to a machine, rank =
// ((replica * pp) + stage) * mp + peer); steps are filled in on the timeline.
Timeline SimulateStop(const StopRun& run, StopTruth* truth);

}  // namespace jobviz::sim

namespace jobviz {
struct StopReport;
}

namespace jobviz::sim {

// Whether the stop report tells the truth: for a run that stopped, that it
// stopped, naming a worker of a place that stopped first, with that place's
// last and next job; for one that finished or was cut for all, nobody.
// `why` says what was wrong.
bool StopReportRight(const StopReport& report, const Timeline& timeline, const StopTruth& truth, std::string* why);

// A random run for the evaluation: plain (one pipeline, no topology) or
// hybrid (pp x mp x dp), 8 to 512 workers, with a random stop.
StopRun RandomStopRun(std::uint64_t seed);

}  // namespace jobviz::sim
