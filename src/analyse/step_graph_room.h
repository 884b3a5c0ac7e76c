// The step graph's working room (analyse/step_graph.h, StepGraphRoom): what
// building a graph keeps from step to step, and the helpers its parts share.
// Internal to the step graph's files (step_graph.cc builds, step_inputs.cc
// finds each job's hand-offs and reduce group, step_gaps.cc classifies the
// gaps, step_walks.cc orders, walks and replays).
#pragma once

#include <algorithm>
#include <array>
#include <compare>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "analyse/schedule.h"
#include "analyse/step_graph.h"
#include "model/name.h"

namespace jobviz {

namespace step_graph_detail {

// A lane job as the hand-offs look it up: pass, chunk, micro-batch, occurrence.
struct HandOffKey {
  int pass = 0, chunk = 0;
  std::int64_t micro_batch = 0;
  std::uint32_t occurrence = 0;
  auto operator<=>(const HandOffKey&) const = default;
};
using HandOffIndex = std::vector<std::pair<HandOffKey, std::int32_t>>;

struct Entry {
  std::uint32_t type = 0;
  std::int64_t micro_batch = 0;
  Nanos start = 0;
  std::uint32_t worker = 0, job = 0, occurrence = 0;
};

// A lane's pass jobs of one (pass, chunk), in start order:
// Impl::pass_jobs[begin, begin + count).
struct PassList {
  std::uint32_t key = 0, begin = 0, count = 0;
};

inline int Chunk(const JobKind& kind) { return std::max(kind.chunk, 0); }

// ClassifyJobType once per type; a run has a handful of types, so the last
// few are kept in front of the table (one lookup per job otherwise).
class JobKinds {
 public:
  JobKind Of(Name type) {
    for (const auto& [index, kind] : recent_)
      if (index == type.index()) return kind;
    const JobKind kind = table_.Of(type);
    recent_[next_++ % recent_.size()] = {type.index(), kind};
    return kind;
  }

 private:
  PerName<JobKind, ClassifyJobType> table_;
  std::array<std::pair<std::uint32_t, JobKind>, 4> recent_{};  // index 0 is the empty name: never a job's type
  size_t next_ = 0;
};

inline bool IsPass(Pass pass) { return pass != Pass::kOther; }

inline std::uint32_t PassKey(Pass pass, int chunk) { return static_cast<std::uint32_t>(pass) << 24 | static_cast<std::uint32_t>(chunk & 0xffffff); }
inline std::uint32_t PassKey(const JobKind& kind) { return PassKey(kind.pass, Chunk(kind)); }

// Lane jobs in start order; equal starts by end, then type and micro-batch,
// so that the order does not depend on how the peers' jobs were matched.
inline bool LaneOrder(const StageJob& a, const StageJob& b) {
  const auto type_a = a.type.index(), type_b = b.type.index();
  return std::tie(a.start, a.end, type_a, a.micro_batch) < std::tie(b.start, b.end, type_b, b.micro_batch);
}

}  // namespace step_graph_detail

struct StepGraphRoom::Impl {
  using HandOffIndex = step_graph_detail::HandOffIndex;
  using Entry = step_graph_detail::Entry;
  using PassList = step_graph_detail::PassList;
  using JobKinds = step_graph_detail::JobKinds;
  JobKinds kinds;
  std::vector<Entry> entries;
  std::vector<std::uint32_t> peers;                          // a lane's workers, ascending
  std::vector<std::pair<std::int32_t, std::int32_t>> range;  // [first, last) job ids per lane
  std::vector<PassList> pass_lists;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> lane_lists;  // [first, last) into pass_lists per lane
  std::vector<std::int32_t> pass_jobs;
  std::vector<HandOffIndex> index;  // per lane, made on demand
  std::vector<int> indexed;         // the lanes with an index this step (to clear them)
  std::vector<char> has_index;      // per lane
  std::vector<std::int32_t> last_pass, first_after_pass;
  std::vector<std::int32_t> group_of_lane;   // the reduce group its last pass is in, -1: none
  std::vector<std::int32_t> group_of_stage;  // per stage rank
  std::vector<std::uint32_t> rank;        // per job: among its lane's jobs of its pass and chunk, in start order
  std::vector<std::uint32_t> occurrence;  // per job: of its (pass, chunk, micro-batch) in the lane; set where indexed
  std::vector<std::uint32_t> waiting, consumers_begin, consumers, fill;
  std::vector<std::int32_t> ready;  // jobs whose predecessors are all in the order
  std::vector<std::int32_t> latest;  // per job: the input that ended last, -1: none
  std::vector<std::uint32_t> link_begin;
  std::vector<Nanos> gaps, typical;

  void Reset(size_t lane_count) {
    index.resize(lane_count);
    has_index.resize(lane_count);
    for (int l : indexed) {
      index[l].clear();
      has_index[l] = 0;
    }
    indexed.clear();
    range.assign(lane_count, {0, 0});
    lane_lists.assign(lane_count, {0, 0});
    pass_lists.clear();
    pass_jobs.clear();
  }
};


namespace step_graph_detail {

using Room = StepGraphRoom::Impl;

// One reduce group per stage with replicas: the last pass of each of its
// lanes, sorted by end; under a global all-reduce, one group of every lane
// (step_inputs.cc).
void GroupReplicas(const GraphLanes& lanes, Room& room, StepGraph* g);
// Node n's inputs, appended to g->inputs: its hand-offs, and for the first
// job after its lane's passes (`after_last_pass`) its reduce group
// (step_inputs.cc).
void AddInputs(const GraphLanes& lanes, Room& room, std::int32_t n, StepGraph* g, bool after_last_pass);
// Each gap before a job, by cause (step_gaps.cc).
void ClassifyGaps(const GraphLanes& lanes, Room& room, StepGraph* g);
// A topological order of the jobs for the replays (step_walks.cc).
void OrderForReplay(Room& room, StepGraph* g);

}  // namespace step_graph_detail

}  // namespace jobviz
