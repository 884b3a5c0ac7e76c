// The stop report's working state while it places each lane
// (analyse/stop_report.cc runs it, analyse/stop_lanes.cc places them) and
// judges the gradients' all-reduce groups (analyse/stop_groups.cc): private
// to those files.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "analyse/step_graph.h"
#include "analyse/stop_report.h"

namespace jobviz::stop {

// Where a worker stands in the step it stopped in: the jobs it finished
// there, and its plan (its jobs of its latest earlier step, in start order).
struct Position {
  std::int64_t step = kNoStep;  // kNoStep: it finished its part of the run
  std::vector<const Job*> done, plan;
  const Job* before = nullptr;  // its last job before the step
};

// An all-reduce group in a step, summed up once (not once per member: at
// a thousand replicas that would be a million checks): its first two
// members that have not run all their passes, and the latest end of those
// that have. A member waits for the first that is not itself.
struct GroupPasses {
  int not_done[2] = {-1, -1};
  Nanos latest = 0;
  int members = 0;
  bool closed = false;  // a member finished the job after its passes: the collective completed
};

struct Context {
  explicit Context(const Timeline& t) : timeline(t), graph(MakeGraphLanes(t)) {}
  const Timeline& timeline;
  GraphLanes graph;
  std::vector<Position> positions;  // per worker
  StopReport report;
  int max_chunk = 0;
  // For a stop in the first step: the plain pass types, the most
  // micro-batches run forward, and a typical duration of each pass.
  Name forward_type, backward_type;
  int micro_batches = 0;
  Nanos forward_usual = 0, backward_usual = -1;  // -1: no line of it
  // The job that follows a step's passes (as another worker ran it), or
  // Paddle's optimizer when no worker got that far.
  Name closing_type{"optimizer"};
  Nanos closing_usual = -1;  // -1: guessed, no line of it
  std::map<std::pair<int, std::int64_t>, GroupPasses> groups;  // (stage or -1 for all, step)
};

// Whether the lane ran every pass of `step` (it is past them in its plan,
// or in a later step); when it did, when its last pass ended (0: earlier).
bool PassesDone(const Context& c, int lane, std::int64_t step, Nanos* at);
// Whether the lane finished the job that follows its passes in `step`.
bool ClosedStep(const Context& c, int lane, std::int64_t step);
// Whether some stage came out of the first unfinished step's all-reduce.
bool SomeStageClosed(const Context& c);
// Every stage ran its passes of the first unfinished step and none came out
// of what follows them: a global all-reduce, whatever finished steps showed.
bool EveryStageAtClosing(const Context& c);
// The lane's all-reduce group in `step`: its stage's replicas, or every
// lane when the all-reduce is global; summed up once per group.
const GroupPasses& GroupOf(Context& c, size_t l, std::int64_t step);

// For a run that stopped in its first step, with no earlier step to read
// the stages' order from: the plain pass types, the most micro-batches
// begun, and the job that closes a step's passes, into `c` (stop_lanes.cc).
void LearnFirstStepOrder(Context& c);
// Where lane `l` of c.report stopped: its state, its last job, the job it
// hangs in or waits for, and whom it waits for (stop_lanes.cc).
void PlaceLane(Context& c, size_t l);

}  // namespace jobviz::stop
