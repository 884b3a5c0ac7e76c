// Where a run that did not finish stopped, and who held it up
// (docs/analysis.md, "Where the run stopped"). Every (replica, stage) of
// the pipelines (its tensor-parallel peers taken as one: they block inside
// the same job) is placed at its last finished job and its next one in the
// schedule, as its own earlier steps ran it. The next job's inputs, by the
// hand-off rules of the step graph (analyse/step_graph.h), say whether it
// was waiting for another stage or had everything and never finished it;
// following the waits leads to the stage that stopped first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/unfinished_steps.h"

namespace jobviz {

enum class StopKind {
  kUnknown,   // no steps to tell by
  kFinished,  // every worker finished the last step
  kStopped,   // a stage stopped first and the logs show it (or --hung): the others waited on it
  // Nothing in the logs times a stop (every log ends within its jobs' own
  // length), and exactly one stage is inside a job while every other stage
  // waits on it: the hang's suspect, said with a hedge (a copy of a live
  // run can look the same).
  kSuspect,
  // Every member of a step's gradient all-reduce reached it and none
  // finished: a collective or network fault (hedged unless the logs time it).
  kAllReduce,
  kCutTogether,  // every log ends mid-step and nothing times a stop: still running, or copied early
  kRunning,      // jobviz follow before any stall: the run goes on, a step in progress
  // The job hung (--hung, follow's stall alarm) after a finished step, and
  // nothing in the logs says the run ended (LogsSayRunEnded).
  kBetweenSteps,
};

// What the user knows beyond the logs.
struct StopOptions {
  // --hung: the job was killed for hanging (follow's stall alarm knows the
  // same). After a finished step that the logs do not call the run's end,
  // it stalled between steps.
  bool hung = false;
};

// A job of the stop report: its type and micro-batch, in which step.
struct StopJob {
  Name type;
  std::int64_t micro_batch = 0;
  std::int64_t step = kNoStep;
  Nanos start = 0, end = 0;  // end 0: it never ended (a next job)
  bool known() const { return !type.empty(); }
};

enum class LaneState {
  kFinished,  // its part of the run is done
  kWaiting,   // its next job's input never came
  kStuck,     // its next job had everything it needs and never finished
  kInAllReduce,  // after its passes, in the gradients' all-reduce that every member reached
  kUnknown,   // no earlier step to read its next job from
};

struct LaneStop {
  int replica = 0, stage = 0;
  std::vector<std::uint32_t> workers;  // AllWorkers order; the one that fell behind first
  StopJob last, next;
  LaneState state = LaneState::kUnknown;
  Nanos ready = 0;          // kStuck: when its next job's inputs had all arrived
  int waits_on = -1;        // kWaiting: the lane whose output never came
  // kWaiting: what it waits for; kStuck: the input that came ("backward 2
  // from stage 3", "the gradients of stage 1 replica 0"); "" when it needed none.
  std::string input;
  Nanos input_arrived = 0;  // kStuck: the latest input's arrival
  Nanos usual = 0;          // how long its next job took in its earlier step; -1: no line of it anywhere
  // Its next job as libjobviz's watchdog saw it (Worker::in_flight): begun
  // at `since` (or, not started, enqueued then) and not ended at `seen`.
  bool in_flight = false, in_flight_started = false;
  Nanos in_flight_since = 0, in_flight_seen = 0;
  size_t waiting_workers = 0;  // workers waiting on it, directly or through a chain
};

// How a worker's log ends, against the others'.
struct WorkerEnding {
  std::uint32_t worker = 0;  // AllWorkers order
  Nanos last_time = 0;       // its last timed line (a job's end, or a glog-stamped line)
  Nanos before_others = 0;   // how long before the latest other log it ends
  std::uint64_t lines = 0;
  std::string last_line;
  bool cut_mid_line = false;
  bool no_jobs = false;
  bool stamped = false;      // its end is a glog-stamped line at or after its last job, not a job's end
};

struct StopReport {
  StopKind kind = StopKind::kUnknown;
  std::int64_t step = kNoStep;        // the first unfinished step
  size_t unfinished_steps = 0, unfinished_jobs = 0;
  Nanos run_start = 0;                // times below are said after it
  int first = -1;                     // kStopped, kSuspect: the lane that stopped first (into lanes)
  std::uint32_t first_worker = 0;     // kStopped, kSuspect: its worker that fell behind first
  bool barrier = false;               // every optimizer waits for every stage (a global all-reduce)
  // The gradients' all-reduce is taken as global: a barrier, or a first step,
  // where nothing shows whether it is one (a stage at its optimizer then
  // waits for every stage's passes, never stuck).
  bool all_reduce_global = false;
  bool hedged = false;                // kSuspect, kAllReduce: nothing in the logs times the stop
  bool hung = false;                  // StopOptions::hung: the user said the job hung
  // kStopped: how far past its usual end the others' logs go on (the
  // evidence); 0 when a watchdog line is the evidence, or under --hung.
  Nanos overdue = 0;
  // kAllReduce: the stage whose replicas' all-reduce never completed, or
  // -1 for the global one (every stage: gradient-norm clipping).
  int all_reduce_stage = -1;
  size_t inside_jobs = 0;             // kCutTogether: stages inside a job when their logs end
  // kStopped: other lanes of the first one's machine that stopped with it
  // (stuck with what they needed, overdue): a machine that failed.
  std::vector<int> stopped_with;
  std::vector<LaneStop> lanes;        // by replica, then stage
  std::vector<WorkerEnding> workers;  // each worker's log end, AllWorkers order
  std::string sentence;               // the one plain sentence that comes first
};

// From the timeline (steps found, unfinished ones marked, roles placed).
StopReport ReportStop(const Timeline& timeline, const UnfinishedSteps& unfinished, StopOptions options = {});

// Whether the run did not finish and there is a stop to show (its stages,
// its logs' ends), whoever is named.
inline bool ShowsStop(const StopReport& r) {
  return r.kind == StopKind::kStopped || r.kind == StopKind::kSuspect || r.kind == StopKind::kAllReduce ||
         r.kind == StopKind::kCutTogether;
}

// The lane a waiting lane's chain of waits leads to: the first on it that is
// not waiting, or the last reached where the chain turns on itself; -1 when
// the lane waits on no lane. A lane that is not waiting leads to itself.
int WaitChainEnd(const StopReport& r, int lane);

// What follow's outputs and live page say while the run goes on (no stall
// alarm): "Running: step N in progress", never "stopped".
StopReport RunningReport(std::int64_t step);

const char* StopKindKey(StopKind kind);    // "finished", "stopped", ...
const char* LaneStateKey(LaneState state);  // "finished", "waiting", ...

}  // namespace jobviz
