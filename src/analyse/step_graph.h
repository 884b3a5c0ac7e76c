// The dependency graph of one step, per pipeline replica: every stage's jobs
// in their measured order, the hand-offs between adjacent stages, and the
// optimizer's wait for the other replicas. Each gap before a job is
// classified (hand-off latency, same-worker stall, step start); the graph
// can be walked back from the job that ended last (the critical path) and
// replayed with causes removed (analyse/step_walks.h). Definitions in
// docs/analysis.md ("Why the bubble is above the ideal").
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "analyse/graph_lanes.h"
#include "analyse/schedule.h"
#include "model/model.h"

namespace jobviz {

// Logged times are rounded (Paddle prints milliseconds to the microsecond):
// a sender that "ends" up to this long after its receiver started, or a job
// that starts this much before its lane's previous one ended, is rounding,
// not clocks that disagree or jobs that overlap. Such an input is used, its
// lag the (negative) difference, so that the replay still reproduces the step.
inline constexpr Nanos kTimeSlack = 5'000;

struct MemberJob {
  std::uint32_t worker = 0, job = 0;  // GraphLanes::workers index, index into its jobs
};

// A job of a stage lane: the same job (type, micro-batch, occurrence in the
// step) of each peer. It starts when its last peer starts and ends when its
// last peer ends. 64 bytes: a step of a large run has a hundred thousand.
struct StageJob {
  Nanos start = 0, end = 0;
  std::int64_t micro_batch = 0;
  // What its start is explained by (ClassifyGaps): the predecessor it
  // waited for (`binding`, -1: none), through a hand-off or not. `wait` is,
  // with a binding, the stall (the worker free and the inputs there);
  // without one (a first job with no input), its start after the step's
  // first job.
  Nanos wait = 0;
  std::uint32_t lane = 0;
  Name type;
  std::int32_t chunk = -1;                      // as JobKind
  std::uint32_t first_member = 0, members = 0;  // into StepGraph::members
  std::uint32_t first_input = 0;                // into StepGraph::inputs
  std::int32_t binding = -1;
  Pass pass = Pass::kOther;
  std::uint8_t inputs = 0;      // a hand-off or a reduce group: at most one
  bool first_in_lane = true;    // else the lane's job before is the one before it in StepGraph::jobs
  bool binding_is_input = false;

  JobKind kind() const { return {pass, chunk}; }
  Nanos stall() const { return binding >= 0 ? wait : 0; }
  Nanos offset() const { return binding >= 0 ? 0 : wait; }
};
static_assert(sizeof(StageJob) == 64);

// A hand-off into a job: the sender, and the latency the replay adds to the
// sender's end (ClassifyGaps). An optimizer waits for the replicas of its
// stage (under a global all-reduce, every lane) through their reduce group:
// `from` is then the last pass that ended last as measured (its own lane's
// too), `lag` the all-reduce's time after it, and a replay takes the latest
// of the group.
struct GraphInput {
  std::int32_t from = 0;
  std::int32_t group = -1;  // into StepGraph::groups; -1: a hand-off from `from` alone
  Nanos lag = 0;
};

// The replicas of one stage whose gradients are reduced before the
// optimizer: each replica's last pass. One group per stage keeps the graph
// linear in jobs (each optimizer waiting for every other replica's last
// pass would be replicas² inputs).
struct ReduceGroup {
  std::uint32_t first_sender = 0, senders = 0;  // into StepGraph::group_senders
};

struct StepGraph {
  Nanos start = 0, end = 0;      // the step's first job start, last job end
  std::vector<StageJob> jobs;    // lane by lane, each lane's in start order
  // For replays: the jobs (and jobs.size() + each group), each after its
  // lane's previous job and its inputs (a group after its senders).
  std::vector<std::int32_t> order;
  std::vector<MemberJob> members;
  std::vector<GraphInput> inputs;
  std::vector<ReduceGroup> groups;
  std::vector<std::int32_t> group_senders;  // StageJobs, each group's by end
  size_t contradicted = 0;  // hand-offs whose sender ended after the receiver started (past kTimeSlack): not used
  size_t overlaps = 0;      // jobs that start before their lane's previous one ended (past kTimeSlack)
  size_t graph_workers = 0; // workers with jobs in the step
  // Every optimizer waited for the last pass of every lane (a global
  // all-reduce, as gradient-norm clipping makes it): then `groups` is one
  // group of every lane, not one per stage.
  bool global_barrier = false;
};

// What building a step graph needs besides the graph, kept by one thread
// from step to step along with its StepGraph: a step of a large run takes
// tens of MB, and taking them afresh every step costs more in page faults
// than building the graph does.
class StepGraphRoom {
 public:
  StepGraphRoom();
  ~StepGraphRoom();
  StepGraphRoom(const StepGraphRoom&) = delete;
  StepGraphRoom& operator=(const StepGraphRoom&) = delete;
  struct Impl;
  std::unique_ptr<Impl> impl;
};

// The graph of one step from each worker's jobs in it (`step_jobs[w]`:
// indices into GraphLanes::workers[w]->jobs, in start order), with its gaps
// classified, into `g` (whatever it held before is replaced; its vectors
// keep their room).
// Without `for_replays`, the graph only serves its critical path: no
// topological order.
void BuildStepGraph(const GraphLanes& lanes, const std::vector<std::span<const std::uint32_t>>& step_jobs,
                    bool for_replays, StepGraph* g, StepGraphRoom* room);
StepGraph BuildStepGraph(const GraphLanes& lanes, const std::vector<std::span<const std::uint32_t>>& step_jobs,
                         bool for_replays = true);

}  // namespace jobviz
