// A simulator of training runs that stop: hybrid 1F1B runs (pp x mp x dp,
// the run simulator's layout, analyse/run_simulator.h) in which one worker
// (with its tensor-parallel peers, which block inside the same job), one
// replica's stage or one machine stops at a random moment, and every other
// worker goes on exactly as far as its dependencies allow before blocking:
// hand-offs, the gradients' all-reduce of each stage's replicas, or a
// global all-reduce before every optimizer (gradient-norm clipping). Or a
// step's all-reduce never completes with everyone in it, or the run stops
// between two steps (a data loader, a checkpoint), or the logs are copied
// at one moment for all, or the run finishes.
//
// It leaves only what real logs hold: each log ends at its last line, with
// no line at a cut or at a death; the live ranks of a killed job end with
// NCCL's timeout line only in runs that say so (`kill_lines`), and
// libjobviz's in-flight lines only where its watchdog would have written
// them (`in_flight`). What the stop report is measured against
// (analyse/stop_report.h, analyse/stop_evaluation.h, docs/analysis.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyse/run_simulator.h"
#include "model/model.h"

namespace jobviz::sim {

enum class StopKind {
  kFinished,
  kCut,           // copied at one moment while it ran: every log ends at its last line
  kWorker,        // one worker died (its tensor-parallel peers block inside the same job)
  kStage,         // one replica's stage died, every peer
  kMachine,       // every worker of one machine died
  kAllReduce,     // a step's gradient all-reduce never completes, every member inside it
  kBetweenSteps,  // nothing after a finished step: a hang outside the pipeline's jobs
};
const char* StopKindName(StopKind kind);

struct StopRun {
  SimRun run;
  StopKind stop = StopKind::kWorker;
  bool barrier = false;    // every optimizer waits for every stage and replica
  bool in_flight = false;  // libjobviz's watchdog writes the jobs it sees stuck (stall_after passed)
  // The live ranks of a killed job end with NCCL's timeout line at the
  // kill; false: every log ends with its last job line (what Paddle leaves).
  bool kill_lines = false;
  // kAllReduce: the all-reduce that hangs is the global one (also without
  // `barrier`), else a random stage's replicas' (dp >= 2).
  bool global_hang = true;
  std::uint64_t seed = 1;
};

// A place the truth names: a (replica, stage), with its last finished job
// and the next one it never finished.
struct TruePlace {
  int replica = 0, stage = 0;
  Name last_type, next_type;
  std::int64_t last_micro_batch = -1, next_micro_batch = -1;
  std::int64_t last_step = kNoStep, next_step = kNoStep;
  bool in_all_reduce = false;  // it died inside its step's gradient all-reduce
};

constexpr int kNoHang = -2, kGlobalHang = -1;

struct StopTruth {
  bool stopped = false;               // a stage stopped first (not finished, not cut for all)
  // The logs time the stop: libjobviz's watchdog saw the dead stage's job
  // stuck, or another log goes on past when that job should have ended by
  // more than its length (on one machine's clock, or across machines by
  // more than the clocks may disagree). Without it, nothing can tell the
  // stop from a copy taken while that job ran.
  bool evidence = false;
  std::vector<TruePlace> first;       // the places that stopped first (a machine: several)
  std::vector<int> dead_workers;      // global ranks whose process died or hung
  int hung_all_reduce = kNoHang;      // kAllReduce: kGlobalHang or the stage whose replicas hung
  std::int64_t hung_step = kNoStep;   // kAllReduce, kBetweenSteps: the step
  Nanos stop_time = 0, kill_time = 0;
};

// Workers are ranks laid out as Simulate lays them (run.per_machine to a
// machine, rank = ((replica * pp) + stage) * mp + peer); steps are filled in on the timeline.
Timeline SimulateStop(const StopRun& run, StopTruth* truth);

}  // namespace jobviz::sim
