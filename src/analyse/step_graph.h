// The dependency graph of one step, per pipeline replica: every stage's jobs
// in their measured order, the hand-offs between adjacent stages, and the
// optimizer's wait for the other replicas. Each gap before a job is
// classified (hand-off latency, same-worker stall, step start); the graph
// can be walked back from the job that ended last (the critical path) and
// replayed with causes removed (analyse/bottleneck.h). Definitions in
// docs/analysis.md ("Why the bubble is above the ideal").
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "analyse/schedule.h"
#include "model/model.h"

namespace jobviz {

// The workers of one stage of one pipeline replica: its tensor-parallel
// peers, which run each job together (a collective inside every job), so
// the graph takes them as one.
struct StageLane {
  int replica = 0, stage = 0;
  std::vector<std::uint32_t> workers;  // indices into GraphLanes::workers
  int before = -1, after = -1;         // lanes of stage - 1 and stage + 1 of the replica; -1: not read
  int first = -1, last = -1;           // the replica's first and last stage (interleaved wrap-around)
  std::vector<int> other_replicas;     // the same stage in the other replicas
};

struct GraphLanes {
  std::vector<const Worker*> workers;  // every worker, machine then worker order (as Analysis::workers)
  std::vector<StageLane> lanes;        // by replica, then stage
  std::vector<int> lane_of;            // per worker; -1: in no pipeline (its stage unknown)
  std::vector<int> stage_rank;         // per lane: its stage's place among the stages there are
  int stage_count = 0;
};

// The lanes of a timeline's pipelines (align/pipeline_order.h PipelineChains).
GraphLanes MakeGraphLanes(const Timeline& timeline);

struct MemberJob {
  std::uint32_t worker = 0, job = 0;  // GraphLanes::workers index, index into its jobs
};

// A job of a stage lane: the same job (type, micro-batch, occurrence in the
// step) of each peer. It starts when its last peer starts and ends when its
// last peer ends.
struct StageJob {
  std::uint32_t lane = 0;
  Name type;
  JobKind kind;
  std::int64_t micro_batch = 0;
  std::uint32_t occurrence = 0;  // of its (pass, chunk, micro-batch) in the lane; set where looked up by it
  std::uint32_t rank = 0;        // among the lane's jobs of its pass and chunk, in start order
  Nanos start = 0, end = 0;
  std::uint32_t first_member = 0, members = 0;  // into StepGraph::members
  std::int32_t prev = -1;                       // the lane's job before, -1: first of the step
  std::uint32_t first_input = 0, inputs = 0;    // into StepGraph::inputs
  // What its start is explained by (ClassifyGaps): the predecessor it
  // waited for (-1: none), through a hand-off or not; `offset` is its start
  // after the step's first job when nothing explains it (a first job with
  // no input); `stall` the wait with the worker free and the inputs there.
  std::int32_t binding = -1;
  bool binding_is_input = false;
  Nanos offset = 0, stall = 0;
};

// A hand-off into a job: the sender, and the latency the replay adds to the
// sender's end (ClassifyGaps). An optimizer waits for the other replicas of
// its stage through their reduce group: `from` is then the one whose last
// pass ended last as measured, and a replay takes the latest of the group
// but its own replica's.
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

// A job as a replay reads it (StepGraph::replay, in topological order), or a
// reduce group (job < 0: its inputs are its senders).
struct ReplayEntry {
  std::int32_t job = 0;                       // the StageJob; -1 - the ReduceGroup
  std::int32_t prev = -1;                     // the entry of its lane's previous job
  std::uint32_t first_input = 0, inputs = 0;  // into StepGraph::replay_inputs
  Nanos offset = 0, stall = 0, duration = 0;
  std::uint32_t members = 0;
};
struct ReplayInput {
  std::int32_t from = 0;      // the sender's entry (a group's entry for a group input)
  std::int32_t exclude = -1;  // for a group input: the receiver's own replica's sender entry
  Nanos lag = 0;
};

struct StepGraph {
  Nanos start = 0, end = 0;      // the step's first job start, last job end
  std::vector<StageJob> jobs;    // lane by lane, each lane's in start order
  std::vector<std::int32_t> order;  // the jobs (and jobs.size() + each group), each after its lane's previous job and its inputs
  std::vector<ReplayEntry> replay;  // `order`, as replays read it
  std::vector<ReplayInput> replay_inputs;
  std::vector<MemberJob> members;
  std::vector<GraphInput> inputs;
  std::vector<ReduceGroup> groups;
  std::vector<std::int32_t> group_senders;  // StageJobs
  size_t contradicted = 0;  // hand-offs whose sender ended after the receiver started: not used
  size_t overlaps = 0;      // jobs that start before their lane's previous one ended
  size_t graph_workers = 0; // workers with jobs in the step
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
// topological order and no replay plan.
void BuildStepGraph(const GraphLanes& lanes, const std::vector<std::span<const std::uint32_t>>& step_jobs,
                    bool for_replays, StepGraph* g, StepGraphRoom* room);
StepGraph BuildStepGraph(const GraphLanes& lanes, const std::vector<std::span<const std::uint32_t>>& step_jobs,
                         bool for_replays = true);

// A piece of the critical path, in time order: a job, or the wait before it.
enum class PathPartKind : std::uint8_t { kJob, kHandOff, kStall, kStepStart };
struct PathPart {
  PathPartKind kind = PathPartKind::kJob;
  std::int32_t job = 0;        // the StageJob (for a wait: the job that waited)
  std::int32_t from = -1;      // kHandOff: the sending StageJob
  Nanos length = 0;
};

// Walks back from the job that ended last; the parts add up to end - start.
std::vector<PathPart> CriticalPath(const StepGraph& graph);

// A replay: every job starts when its lane and its inputs are ready (plus
// its stall), in measured order, for `durations` (per StageJob; empty: as
// measured; indexed like StepGraph::jobs) and without hand-off latency or
// stalls when asked.
struct ReplayChange {
  std::span<const Nanos> durations;
  bool free_hand_offs = false;
  bool no_stall = false;
};
struct ReplayResult {
  Nanos step_time = 0;  // last end after the step's start
  Nanos busy = 0;       // job durations x peers: busy time of the step's workers
};
struct ReplayScratch {
  std::vector<Nanos> end, second;  // per entry; for a group: its latest and second-latest sender's end
  std::vector<std::int32_t> top;   // for a group: the entry of its latest sender
};
ReplayResult Replay(const StepGraph& graph, const ReplayChange& change, ReplayScratch& scratch);

}  // namespace jobviz
