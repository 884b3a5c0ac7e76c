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
  kStopped,   // a stage stopped first; the others waited on it
  kCutTogether,  // every log ends mid-step at about the same time: no one stands out
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
  int first = -1;                     // kStopped: the lane that stopped first (into lanes)
  std::uint32_t first_worker = 0;     // kStopped: its worker that fell behind first
  bool barrier = false;               // every optimizer waits for every stage (a global all-reduce)
  // kStopped: other lanes of the first one's machine that stopped with it
  // (stuck with what they needed, overdue): a machine that failed.
  std::vector<int> stopped_with;
  std::vector<LaneStop> lanes;        // by replica, then stage
  std::vector<WorkerEnding> workers;  // each worker's log end, AllWorkers order
  std::string sentence;               // the one plain sentence that comes first
};

// From the timeline (steps found, unfinished ones marked, roles placed).
StopReport ReportStop(const Timeline& timeline, const UnfinishedSteps& unfinished);

const char* StopKindKey(StopKind kind);    // "finished", "stopped", ...
const char* LaneStateKey(LaneState state);  // "finished", "waiting", ...

}  // namespace jobviz
