#include "analyse/step_graph.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

#include "align/pipeline_order.h"
#include "model/time_value.h"

namespace jobviz {

GraphLanes MakeGraphLanes(const Timeline& timeline) {
  GraphLanes g;
  std::map<const Worker*, std::uint32_t> index;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) {
      index[&worker] = static_cast<std::uint32_t>(g.workers.size());
      g.workers.push_back(&worker);
    }
  g.lane_of.assign(g.workers.size(), -1);
  // Chains are per (replica, peer); a lane joins the peers of one stage.
  const std::vector<PipelineChain> chains = PipelineChains(timeline);
  std::map<std::pair<int, int>, int> lane_at;  // (replica, stage) -> lane
  for (const PipelineChain& chain : chains)
    for (const int stage : chain.numbers) lane_at.try_emplace({chain.replica, stage}, -1);
  std::map<int, int> stage_rank;
  for (auto& [key, lane] : lane_at) {
    lane = static_cast<int>(g.lanes.size());
    g.lanes.push_back({key.first, key.second, {}, -1, -1, -1, -1, {}});
    stage_rank.try_emplace(key.second, 0);
  }
  for (auto& [stage, rank] : stage_rank) rank = g.stage_count++;
  for (const StageLane& lane : g.lanes) g.stage_rank.push_back(stage_rank.at(lane.stage));
  for (const PipelineChain& chain : chains)
    for (size_t k = 0; k < chain.stages.size(); ++k) {
      const int lane = lane_at.at({chain.replica, chain.numbers[k]});
      const std::uint32_t w = index.at(chain.stages[k].second);
      g.lanes[lane].workers.push_back(w);
      g.lane_of[w] = lane;
    }
  // Neighbours; the first and last stage of a replica only when none between is missing.
  std::map<int, std::vector<int>> by_replica;
  for (size_t l = 0; l < g.lanes.size(); ++l) by_replica[g.lanes[l].replica].push_back(static_cast<int>(l));
  std::map<int, std::vector<int>> by_stage;
  for (size_t l = 0; l < g.lanes.size(); ++l) by_stage[g.lanes[l].stage].push_back(static_cast<int>(l));
  for (const auto& [replica, lanes] : by_replica) {  // sorted by stage (lane_at's order)
    bool contiguous = true;
    for (size_t k = 0; k + 1 < lanes.size(); ++k) {
      if (g.lanes[lanes[k + 1]].stage == g.lanes[lanes[k]].stage + 1) {
        g.lanes[lanes[k]].after = lanes[k + 1];
        g.lanes[lanes[k + 1]].before = lanes[k];
      } else {
        contiguous = false;
      }
    }
    for (int l : lanes)
      if (contiguous) {
        g.lanes[l].first = lanes.front();
        g.lanes[l].last = lanes.back();
      }
  }
  for (const auto& [stage, lanes] : by_stage)
    for (int l : lanes)
      for (int o : lanes)
        if (o != l) g.lanes[l].other_replicas.push_back(o);
  return g;
}

namespace {

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

int Chunk(const JobKind& kind) { return std::max(kind.chunk, 0); }

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

bool IsPass(Pass pass) { return pass != Pass::kOther; }

std::uint32_t PassKey(Pass pass, int chunk) { return static_cast<std::uint32_t>(pass) << 24 | static_cast<std::uint32_t>(chunk & 0xffffff); }
std::uint32_t PassKey(const JobKind& kind) { return PassKey(kind.pass, Chunk(kind)); }

// Lane jobs in start order; equal starts by end, then type and micro-batch,
// so that the order does not depend on how the peers' jobs were matched.
bool LaneOrder(const StageJob& a, const StageJob& b) {
  const auto type_a = a.type.index(), type_b = b.type.index();
  return std::tie(a.start, a.end, type_a, a.micro_batch) < std::tie(b.start, b.end, type_b, b.micro_batch);
}

}  // namespace

struct StepGraphRoom::Impl {
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

StepGraphRoom::StepGraphRoom() : impl(std::make_unique<Impl>()) {}
StepGraphRoom::~StepGraphRoom() = default;

namespace {

using Room = StepGraphRoom::Impl;

// The lane jobs of one lane of several peers, matched by (type,
// micro-batch, occurrence): when every peer ran the same sequence of (type,
// micro-batch), the k-th jobs of the peers are one lane job; otherwise they
// are matched by sorting. Unsorted: BuildLane sorts them.
void MatchPeers(const GraphLanes& lanes, const StageLane& lane, const std::vector<std::span<const std::uint32_t>>& step_jobs,
                Room& room, StepGraph* g, const auto& new_node) {
  room.peers.assign(lane.workers.begin(), lane.workers.end());
  std::sort(room.peers.begin(), room.peers.end());  // members in worker order
  const std::span<const std::uint32_t> lead = step_jobs[room.peers[0]];
  const std::vector<Job>& lead_jobs = lanes.workers[room.peers[0]]->jobs;
  bool in_lockstep = true;
  for (size_t p = 1; p < room.peers.size() && in_lockstep; ++p) {
    const std::span<const std::uint32_t> other = step_jobs[room.peers[p]];
    const std::vector<Job>& other_jobs = lanes.workers[room.peers[p]]->jobs;
    in_lockstep = other.size() == lead.size();
    for (size_t k = 0; k < lead.size() && in_lockstep; ++k) {
      const Job &a = lead_jobs[lead[k]], &b = other_jobs[other[k]];
      in_lockstep = a.type == b.type && a.micro_batch == b.micro_batch;
    }
  }
  if (in_lockstep) {
    for (size_t k = 0; k < lead.size(); ++k) {
      StageJob node = new_node(lead_jobs[lead[k]]);
      for (std::uint32_t w : room.peers) {
        const std::uint32_t j = step_jobs[w][k];
        const Job& member = lanes.workers[w]->jobs[j];
        node.start = std::max(node.start, member.start);
        node.end = std::max(node.end, member.end);
        g->members.push_back({w, j});
      }
      node.members = static_cast<std::uint32_t>(room.peers.size());
      g->jobs.push_back(node);
    }
    return;
  }
  std::vector<Entry>& entries = room.entries;
  entries.clear();
  for (std::uint32_t w : room.peers)
    for (std::uint32_t j : step_jobs[w]) {
      const Job& job = lanes.workers[w]->jobs[j];
      entries.push_back({job.type.index(), job.micro_batch, job.start, w, j, 0});
    }
  // Occurrence of (type, micro-batch) on each worker, in start order.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.type, a.micro_batch, a.worker, a.start, a.job) < std::tie(b.type, b.micro_batch, b.worker, b.start, b.job);
  });
  for (size_t i = 1; i < entries.size(); ++i) {
    const Entry& p = entries[i - 1];
    Entry& e = entries[i];
    if (e.type == p.type && e.micro_batch == p.micro_batch && e.worker == p.worker) e.occurrence = p.occurrence + 1;
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.type, a.micro_batch, a.occurrence, a.worker) < std::tie(b.type, b.micro_batch, b.occurrence, b.worker);
  });
  for (size_t i = 0; i < entries.size();) {
    StageJob node = new_node(lanes.workers[entries[i].worker]->jobs[entries[i].job]);
    size_t k = i;
    for (; k < entries.size() && entries[k].type == entries[i].type && entries[k].micro_batch == entries[i].micro_batch &&
           entries[k].occurrence == entries[i].occurrence;
         ++k) {
      const Job& member = lanes.workers[entries[k].worker]->jobs[entries[k].job];
      node.start = std::max(node.start, member.start);
      node.end = std::max(node.end, member.end);
      g->members.push_back({entries[k].worker, entries[k].job});
    }
    node.members = static_cast<std::uint32_t>(k - i);
    g->jobs.push_back(node);
    i = k;
  }
}

// The lane jobs of one lane, in start order, and its pass jobs listed by
// (pass, chunk).
void BuildLane(const GraphLanes& lanes, int l, const std::vector<std::span<const std::uint32_t>>& step_jobs, Room& room,
               StepGraph* g) {
  const StageLane& lane = lanes.lanes[l];
  const size_t first_job = g->jobs.size();
  const auto new_node = [&](const Job& job) {
    StageJob node;
    node.lane = static_cast<std::uint32_t>(l);
    node.type = job.type;
    const JobKind kind = room.kinds.Of(job.type);
    node.pass = kind.pass;
    node.chunk = kind.chunk;
    node.micro_batch = job.micro_batch;
    node.first_member = static_cast<std::uint32_t>(g->members.size());
    node.start = job.start;
    node.end = job.end;
    return node;
  };
  if (lane.workers.size() == 1) {
    // One worker: every job is a lane job, already in start order.
    const std::uint32_t w = lane.workers[0];
    for (std::uint32_t j : step_jobs[w]) {
      g->jobs.push_back(new_node(lanes.workers[w]->jobs[j]));
      g->jobs.back().members = 1;
      g->members.push_back({w, j});
    }
  } else {
    MatchPeers(lanes, lane, step_jobs, room, g, new_node);
    const auto first = g->jobs.begin() + static_cast<std::ptrdiff_t>(first_job);
    if (!std::is_sorted(first, g->jobs.end(), LaneOrder)) std::sort(first, g->jobs.end(), LaneOrder);
  }
  // Each pass job's rank among the lane's jobs of its pass and chunk (the
  // hand-offs pair the k-th forward of one stage with the k-th of the next).
  const auto lists_first = static_cast<std::uint32_t>(room.pass_lists.size());
  const auto list_of = [&](std::uint32_t key) {
    for (size_t i = lists_first; i < room.pass_lists.size(); ++i)
      if (room.pass_lists[i].key == key) return &room.pass_lists[i];
    room.pass_lists.push_back({key, 0, 0});
    return &room.pass_lists.back();
  };
  room.rank.resize(g->jobs.size());
  for (size_t n = first_job; n < g->jobs.size(); ++n) {
    StageJob& node = g->jobs[n];
    node.first_in_lane = n == first_job;
    if (IsPass(node.pass)) room.rank[n] = list_of(PassKey(node.kind()))->count++;
  }
  for (size_t i = lists_first; i < room.pass_lists.size(); ++i) {
    room.pass_lists[i].begin = static_cast<std::uint32_t>(room.pass_jobs.size());
    room.pass_jobs.resize(room.pass_jobs.size() + room.pass_lists[i].count);
  }
  for (size_t n = first_job; n < g->jobs.size(); ++n) {
    const StageJob& node = g->jobs[n];
    if (IsPass(node.pass)) room.pass_jobs[list_of(PassKey(node.kind()))->begin + room.rank[n]] = static_cast<std::int32_t>(n);
  }
  room.lane_lists[l] = {lists_first, static_cast<std::uint32_t>(room.pass_lists.size())};
}

// The lane's hand-off index, sorted by (pass, chunk, micro-batch,
// occurrence), with each job's occurrence set: made only for a lane where
// pairing by rank failed (a job missing from one side).
void BuildIndex(std::int32_t first, std::int32_t last, const StepGraph& g, HandOffIndex* index, std::vector<std::uint32_t>& occurrence) {
  for (std::int32_t n = first; n < last; ++n) {
    const StageJob& node = g.jobs[n];
    if (IsPass(node.pass)) index->push_back({{static_cast<int>(node.pass), Chunk(node.kind()), node.micro_batch, 0}, n});
  }
  std::sort(index->begin(), index->end(), [](const auto& a, const auto& b) {
    return std::tie(a.first.pass, a.first.chunk, a.first.micro_batch, a.second) <
           std::tie(b.first.pass, b.first.chunk, b.first.micro_batch, b.second);
  });
  for (size_t i = 1; i < index->size(); ++i) {
    HandOffKey& key = (*index)[i].first;
    const HandOffKey& before = (*index)[i - 1].first;
    if (key.pass == before.pass && key.chunk == before.chunk && key.micro_batch == before.micro_batch)
      key.occurrence = before.occurrence + 1;
  }
  for (const auto& [key, n] : *index) occurrence[n] = key.occurrence;
}

std::int32_t Find(const HandOffIndex& index, const HandOffKey& key) {
  const auto it = std::lower_bound(index.begin(), index.end(), std::make_pair(key, std::int32_t{-1}));
  return it != index.end() && it->first == key ? it->second : -1;
}

void Index(int lane, Room& room, StepGraph* g) {
  if (room.has_index[lane]) return;
  BuildIndex(room.range[lane].first, room.range[lane].second, *g, &room.index[lane], room.occurrence);
  room.indexed.push_back(lane);
  room.has_index[lane] = 1;
}

// The job of lane `from_lane` that hands over to `node` as (pass, chunk): the
// one of the same rank in its pass list, when its micro-batch agrees; else
// the one with the same micro-batch and occurrence (a job missing on one side).
std::int32_t Sender(Room& room, int from_lane, Pass pass, int chunk, std::int32_t n, StepGraph* g) {
  const StageJob& node = g->jobs[n];
  const std::uint32_t key = PassKey(pass, chunk);
  const PassList* list = nullptr;
  for (std::uint32_t i = room.lane_lists[from_lane].first; i < room.lane_lists[from_lane].second; ++i)
    if (room.pass_lists[i].key == key) list = &room.pass_lists[i];
  if (!list) return -1;
  if (room.rank[n] < list->count) {
    const std::int32_t same_rank = room.pass_jobs[list->begin + room.rank[n]];
    if (g->jobs[same_rank].micro_batch == node.micro_batch) return same_rank;
  }
  Index(static_cast<int>(node.lane), room, g);  // the node's occurrence
  Index(from_lane, room, g);
  return Find(room.index[from_lane], {static_cast<int>(pass), chunk, node.micro_batch, room.occurrence[n]});
}

// Node n's inputs, appended to g->inputs; a hand-off whose sender ended
// after the receiver began is one the clocks contradict (counted, not used).
void AddInputs(const GraphLanes& lanes, Room& room, std::int32_t n, StepGraph* g, bool after_last_pass) {
  const StageJob& node = g->jobs[n];
  const StageLane& lane = lanes.lanes[node.lane];
  const int chunk = Chunk(node.kind());
  const auto input = [&](std::int32_t from) {
    if (g->jobs[from].end > node.start + kTimeSlack) ++g->contradicted;
    else g->inputs.push_back({from, -1, 0});
  };
  const auto add = [&](int from_lane, Pass pass, int from_chunk) {
    if (from_lane < 0) return false;
    const std::int32_t from = Sender(room, from_lane, pass, from_chunk, n, g);
    if (from >= 0) input(from);
    return from >= 0;
  };
  switch (node.pass) {
    case Pass::kForward:
      if (lane.before >= 0) add(lane.before, Pass::kForward, chunk);
      else if (lane.first == static_cast<int>(node.lane) && chunk > 0) add(lane.last, Pass::kForward, chunk - 1);
      break;
    case Pass::kBackward:
    case Pass::kBackwardInput: {
      const Pass other = node.pass == Pass::kBackward ? Pass::kBackwardInput : Pass::kBackward;
      if (lane.after >= 0) {
        if (!add(lane.after, node.pass, chunk)) add(lane.after, other, chunk);
      } else if (lane.last == static_cast<int>(node.lane)) {
        if (!add(lane.first, node.pass, chunk + 1)) add(lane.first, other, chunk + 1);
      }
      break;
    }
    case Pass::kBackwardWeight:
      break;
    case Pass::kOther:
      // The optimizer's gradients are reduced across replicas: the first job
      // after the lane's last pass waits for the other replicas' last pass
      // (under a global all-reduce, for every other lane's).
      if (after_last_pass && room.group_of_lane[node.lane] >= 0) {
        const std::int32_t group = room.group_of_lane[node.lane];
        const std::int32_t own = room.last_pass[node.lane];
        const ReduceGroup& reduce = g->groups[group];
        const auto first = g->group_senders.begin() + reduce.first_sender, last = first + reduce.senders;  // by end
        // The latest of every lane's, its own too: the all-reduce ends a
        // while after the last gradients are in, whoever sent them.
        const std::int32_t latest = reduce.senders > 1 ? last[-1] : -1;
        if (latest < 0) break;
        if (g->jobs[latest].end <= node.start + kTimeSlack) {
          g->inputs.push_back({latest, group, 0});
          break;
        }
        // The clocks contradict: each other replica that ended after this
        // job began is counted, and the group is not waited for.
        const Nanos began = node.start + kTimeSlack;
        const auto later = std::upper_bound(first, last, began,
                                            [&](Nanos start, std::int32_t sender) { return start < g->jobs[sender].end; });
        g->contradicted += static_cast<size_t>(last - later) - (g->jobs[own].end > began ? 1 : 0);
      }
      break;
  }
}

// Gaps: per link, the median wait of a receiver that was free when the
// sender ended is the link's typical latency; a job's wait is hand-off
// latency up to its latest input's arrival, stall after it (docs/analysis.md).
void ClassifyGaps(const GraphLanes& lanes, Room& room, StepGraph* g) {
  // Links by receiving stage and where the input comes from: the stage
  // before, the stage after, the other end of the pipeline (interleaved
  // wrap-around), or a reduce group (into the job after the passes: the
  // only inputs of such a job).
  const auto link = [&](const StageJob& from, const StageJob& to) {
    const int from_stage = lanes.lanes[from.lane].stage, to_stage = lanes.lanes[to.lane].stage;
    const int kind = !IsPass(to.pass) ? 3 : from_stage == to_stage - 1 ? 0 : from_stage == to_stage + 1 ? 1 : 2;
    return static_cast<size_t>(lanes.stage_rank[to.lane]) * 4 + static_cast<size_t>(kind);
  };
  const size_t links = static_cast<size_t>(lanes.stage_count) * 4;
  // A sample: a job whose latest input ended when its lane was free already;
  // counted per link in one pass, its gap put in its link's bucket in a
  // second (no list of samples: 16 bytes a job of the step, per thread).
  const auto sampled = [&](size_t n) {
    const std::int32_t latest = room.latest[n];
    return latest >= 0 && g->jobs[latest].end >= (g->jobs[n].first_in_lane ? g->start : g->jobs[n - 1].end);
  };
  std::vector<std::uint32_t>& begin = room.link_begin;
  begin.assign(links + 1, 0);
  room.latest.resize(g->jobs.size());
  size_t samples = 0;
  for (size_t n = 0; n < g->jobs.size(); ++n) {
    const StageJob& node = g->jobs[n];
    std::int32_t latest = -1;
    for (std::uint32_t k = 0; k < node.inputs; ++k) {
      const std::int32_t from = g->inputs[node.first_input + k].from;
      if (latest < 0 || g->jobs[from].end > g->jobs[latest].end) latest = from;
    }
    room.latest[n] = latest;
    if (sampled(n)) {
      ++begin[link(g->jobs[latest], node) + 1];
      ++samples;
    }
  }
  // Each link's median (nearest rank).
  for (size_t k = 0; k < links; ++k) begin[k + 1] += begin[k];
  room.gaps.resize(samples);
  room.fill.assign(begin.begin(), begin.end() - 1);
  for (size_t n = 0; n < g->jobs.size(); ++n)
    if (sampled(n)) {
      const StageJob& from = g->jobs[room.latest[n]];
      room.gaps[room.fill[link(from, g->jobs[n])]++] = g->jobs[n].start - from.end;
    }
  room.typical.assign(links, 0);
  for (size_t k = 0; k < links; ++k)
    if (begin[k + 1] > begin[k]) {
      const auto first = room.gaps.begin() + begin[k], last = room.gaps.begin() + begin[k + 1];
      const auto at = first + (last - first - 1) / 2;
      std::nth_element(first, at, last);
      room.typical[k] = *at;
    }
  for (size_t n = 0; n < g->jobs.size(); ++n) {
    StageJob& node = g->jobs[n];
    const bool first = node.first_in_lane;
    const Nanos lane_free = first ? g->start : g->jobs[n - 1].end;
    if (!first && lane_free > node.start + kTimeSlack) ++g->overlaps;
    const std::int32_t latest = room.latest[n];
    if (latest >= 0 && g->jobs[latest].end >= lane_free) {  // the input came last: all of the wait is the hand-off
      const Nanos lag = node.start - g->jobs[latest].end;
      for (std::uint32_t k = 0; k < node.inputs; ++k) {
        GraphInput& in = g->inputs[node.first_input + k];
        in.lag = in.from == latest ? lag : std::min(room.typical[link(g->jobs[in.from], node)], node.start - g->jobs[in.from].end);
      }
      node.binding = latest;
      node.binding_is_input = true;
      continue;
    }
    GraphInput* latest_input = nullptr;
    Nanos arrival = std::numeric_limits<Nanos>::min();
    for (std::uint32_t k = 0; k < node.inputs; ++k) {
      GraphInput& in = g->inputs[node.first_input + k];
      const StageJob& from = g->jobs[in.from];
      in.lag = std::min(room.typical[link(from, node)], node.start - from.end);
      if (from.end + in.lag > arrival) {
        arrival = from.end + in.lag;
        latest_input = &in;
      }
    }
    if (latest_input && arrival > lane_free) {  // the worker was busy past the sender's end, the data later still
      node.binding = latest_input->from;
      node.binding_is_input = true;
      node.wait = node.start - arrival;
      continue;
    }
    if (first) {
      node.wait = node.start - g->start;
      continue;
    }
    node.binding = static_cast<std::int32_t>(n - 1);
    node.wait = std::max<Nanos>(0, node.start - lane_free);
  }
}

// A topological order of the jobs (Kahn's algorithm, linear): every job
// after its lane's previous job and its inputs, every reduce group (node
// jobs.size() + group) after its senders. Jobs in a cycle (only jobs of zero
// length at one instant can form one) lose their inputs from each other.
void OrderForReplay(Room& room, StepGraph* g) {
  const size_t n = g->jobs.size(), nodes = n + g->groups.size();
  const auto source = [&](const GraphInput& in) { return in.group >= 0 ? n + static_cast<size_t>(in.group) : static_cast<size_t>(in.from); };
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::vector<std::uint32_t>&waiting = room.waiting, &consumers_begin = room.consumers_begin, &consumers = room.consumers,
    &fill = room.fill;
    waiting.resize(nodes);
    consumers_begin.assign(nodes + 1, 0);
    consumers.resize(g->inputs.size() + g->group_senders.size());
    for (size_t k = 0; k < n; ++k) {
      const StageJob& node = g->jobs[k];
      waiting[k] = !node.first_in_lane + node.inputs;
      for (std::uint32_t i = 0; i < node.inputs; ++i) ++consumers_begin[source(g->inputs[node.first_input + i]) + 1];
    }
    for (size_t r = 0; r < g->groups.size(); ++r) {
      waiting[n + r] = g->groups[r].senders;
      for (std::uint32_t i = 0; i < g->groups[r].senders; ++i) ++consumers_begin[g->group_senders[g->groups[r].first_sender + i] + 1];
    }
    for (size_t k = 0; k < nodes; ++k) consumers_begin[k + 1] += consumers_begin[k];
    fill.assign(consumers_begin.begin(), consumers_begin.end() - 1);
    for (size_t k = 0; k < n; ++k) {
      const StageJob& node = g->jobs[k];
      for (std::uint32_t i = 0; i < node.inputs; ++i) consumers[fill[source(g->inputs[node.first_input + i])]++] = static_cast<std::uint32_t>(k);
    }
    for (size_t r = 0; r < g->groups.size(); ++r)
      for (std::uint32_t i = 0; i < g->groups[r].senders; ++i)
        consumers[fill[g->group_senders[g->groups[r].first_sender + i]]++] = static_cast<std::uint32_t>(n + r);
    // Ready jobs on a stack, the lane's next job pushed last: the order runs
    // along a lane while it can, so that replays read the jobs nearly in
    // memory order (a queue would hop from lane to lane, a cache miss a job).
    g->order.clear();
    std::vector<std::int32_t>& ready = room.ready;
    ready.clear();
    for (size_t k = nodes; k-- > 0;)
      if (waiting[k] == 0) ready.push_back(static_cast<std::int32_t>(k));
    while (!ready.empty()) {
      const auto k = static_cast<size_t>(ready.back());
      ready.pop_back();
      g->order.push_back(static_cast<std::int32_t>(k));
      const auto done = [&](size_t next) {
        if (--waiting[next] == 0) ready.push_back(static_cast<std::int32_t>(next));
      };
      for (std::uint32_t c = consumers_begin[k]; c < consumers_begin[k + 1]; ++c) done(consumers[c]);
      if (k + 1 < n && !g->jobs[k + 1].first_in_lane) done(k + 1);
    }
    if (g->order.size() == nodes) break;
    // Break the cycles: inputs between jobs not reached are dropped (counted).
    // (A group's senders are pass jobs and its receivers optimizers, which
    // send nothing: no cycle runs through a group.)
    std::vector<bool> reached(nodes, false);
    for (std::int32_t k : g->order) reached[k] = true;
    std::vector<GraphInput> kept;
    for (size_t k = 0; k < n; ++k) {
      StageJob& node = g->jobs[k];
      const std::uint32_t first = static_cast<std::uint32_t>(kept.size());
      for (std::uint32_t i = 0; i < node.inputs; ++i) {
        const GraphInput& in = g->inputs[node.first_input + i];
        if (!reached[k] && !reached[source(in)]) ++g->contradicted;
        else kept.push_back(in);
      }
      node.first_input = first;
      node.inputs = static_cast<std::uint8_t>(kept.size() - first);
    }
    g->inputs = std::move(kept);
  }
}

// Whether every optimizer waited for the last pass anywhere: every lane's
// first job after its passes starts after the latest last pass of any lane
// (less half a typical last pass, for what the clocks leave), on two stages
// or more. Without a global all-reduce, the stage whose passes end first
// (the last, in 1F1B) starts its optimizer a backward or more before the
// first stage's passes end.
bool WaitsForEveryStage(const GraphLanes& lanes, const Room& room, const StepGraph& g) {
  Nanos latest = std::numeric_limits<Nanos>::min();
  std::vector<Nanos> lengths;
  int first_stage = -1;
  bool two_stages = false;
  for (size_t l = 0; l < lanes.lanes.size(); ++l) {
    if (room.last_pass[l] < 0) continue;
    const StageJob& last = g.jobs[room.last_pass[l]];
    latest = std::max(latest, last.end);
    lengths.push_back(last.end - last.start);
    if (room.first_after_pass[l] < 0) continue;
    if (first_stage < 0) first_stage = lanes.lanes[l].stage;
    two_stages |= lanes.lanes[l].stage != first_stage;
  }
  if (!two_stages) return false;
  const auto middle = lengths.begin() + static_cast<std::ptrdiff_t>(lengths.size() / 2);
  std::nth_element(lengths.begin(), middle, lengths.end());
  const Nanos slack = *middle / 2;
  for (size_t l = 0; l < lanes.lanes.size(); ++l)
    if (room.last_pass[l] >= 0 && room.first_after_pass[l] >= 0 && g.jobs[room.first_after_pass[l]].start < latest - slack)
      return false;
  return true;
}

// One reduce group per stage with replicas: the last pass of each of its
// lanes, sorted by end. Under a global all-reduce, one group of every lane.
void GroupReplicas(const GraphLanes& lanes, Room& room, StepGraph* g) {
  room.group_of_lane.assign(lanes.lanes.size(), -1);
  room.group_of_stage.assign(static_cast<size_t>(lanes.stage_count), -1);
  g->global_barrier = WaitsForEveryStage(lanes, room, *g);
  for (size_t l = 0; l < lanes.lanes.size(); ++l) {
    if (room.last_pass[l] < 0 || (lanes.lanes[l].other_replicas.empty() && !g->global_barrier)) continue;
    std::int32_t& group = room.group_of_stage[g->global_barrier ? 0 : lanes.stage_rank[l]];
    if (group < 0) {
      group = static_cast<std::int32_t>(g->groups.size());
      g->groups.push_back({});
    }
    room.group_of_lane[l] = group;
    ++g->groups[group].senders;
  }
  std::uint32_t offset = 0;
  for (ReduceGroup& reduce : g->groups) {
    reduce.first_sender = offset;
    offset += reduce.senders;
    reduce.senders = 0;
  }
  g->group_senders.resize(offset);
  for (size_t l = 0; l < lanes.lanes.size(); ++l)
    if (room.group_of_lane[l] >= 0) {
      ReduceGroup& reduce = g->groups[room.group_of_lane[l]];
      g->group_senders[reduce.first_sender + reduce.senders++] = room.last_pass[l];
    }
  for (const ReduceGroup& reduce : g->groups) {
    const auto first = g->group_senders.begin() + reduce.first_sender;
    std::sort(first, first + reduce.senders, [&](std::int32_t a, std::int32_t b) {
      return std::tie(g->jobs[a].end, a) < std::tie(g->jobs[b].end, b);
    });
  }
}

}  // namespace

void BuildStepGraph(const GraphLanes& lanes, const std::vector<std::span<const std::uint32_t>>& step_jobs,
                    bool for_replays, StepGraph* out, StepGraphRoom* step_room) {
  StepGraph& g = *out;
  Room& room = *step_room->impl;
  g.start = g.end = 0;
  g.jobs.clear();
  g.order.clear();
  g.members.clear();
  g.inputs.clear();
  g.groups.clear();
  g.group_senders.clear();
  g.contradicted = g.overlaps = g.graph_workers = 0;
  g.global_barrier = false;
  room.Reset(lanes.lanes.size());
  // Sized once: a step of a large run holds a job per job of the step, and
  // vectors that double on the way would leave up to half of them unused.
  size_t step_job_count = 0;
  for (size_t w = 0; w < step_jobs.size(); ++w)
    if (lanes.lane_of[w] >= 0) step_job_count += step_jobs[w].size();
  g.jobs.reserve(step_job_count);
  g.members.reserve(step_job_count);
  for (size_t l = 0; l < lanes.lanes.size(); ++l) {
    room.range[l].first = static_cast<std::int32_t>(g.jobs.size());
    BuildLane(lanes, static_cast<int>(l), step_jobs, room, &g);
    room.range[l].second = static_cast<std::int32_t>(g.jobs.size());
  }
  if (g.jobs.empty()) return;
  room.occurrence.resize(g.jobs.size());
  for (size_t w = 0; w < step_jobs.size(); ++w) g.graph_workers += !step_jobs[w].empty() && lanes.lane_of[w] >= 0;
  // Each lane's last pass job (by end): the optimizer's other replicas wait for it.
  room.last_pass.assign(lanes.lanes.size(), -1);
  room.first_after_pass.assign(lanes.lanes.size(), -1);
  for (size_t l = 0; l < lanes.lanes.size(); ++l) {
    std::int32_t last_in_order = -1;
    std::int32_t& last_pass = room.last_pass[l];
    for (std::int32_t n = room.range[l].first; n < room.range[l].second; ++n)
      if (IsPass(g.jobs[n].pass)) {
        last_in_order = n;
        if (last_pass < 0 || g.jobs[n].end > g.jobs[last_pass].end) last_pass = n;
      }
    if (last_in_order >= 0 && last_in_order + 1 < room.range[l].second) room.first_after_pass[l] = last_in_order + 1;
  }
  GroupReplicas(lanes, room, &g);
  g.inputs.reserve(g.jobs.size());
  for (size_t l = 0; l < lanes.lanes.size(); ++l)
    for (std::int32_t n = room.range[l].first; n < room.range[l].second; ++n) {
      g.jobs[n].first_input = static_cast<std::uint32_t>(g.inputs.size());
      AddInputs(lanes, room, n, &g, room.first_after_pass[l] == n);
      g.jobs[n].inputs = static_cast<std::uint8_t>(g.inputs.size() - g.jobs[n].first_input);  // at most one
    }
  g.start = g.jobs.front().start;
  g.end = g.jobs.front().end;
  for (const StageJob& node : g.jobs) {
    g.start = std::min(g.start, node.start);
    g.end = std::max(g.end, node.end);
  }
  if (for_replays) OrderForReplay(room, &g);
  ClassifyGaps(lanes, room, &g);
}

StepGraph BuildStepGraph(const GraphLanes& lanes, const std::vector<std::span<const std::uint32_t>>& step_jobs,
                         bool for_replays) {
  StepGraph g;
  StepGraphRoom room;
  BuildStepGraph(lanes, step_jobs, for_replays, &g, &room);
  return g;
}

std::vector<PathPart> CriticalPath(const StepGraph& g) {
  std::vector<PathPart> parts;
  if (g.jobs.empty()) return parts;
  std::int32_t n = 0;
  for (std::int32_t k = 1; k < static_cast<std::int32_t>(g.jobs.size()); ++k)
    if (g.jobs[k].end > g.jobs[n].end || (g.jobs[k].end == g.jobs[n].end && g.jobs[k].start >= g.jobs[n].start)) n = k;
  Nanos covered = 0;
  // A chain goes back in time; only jobs of no length at one instant could
  // loop (their cycles are cut for replays, not here): a walk is at most every job.
  for (size_t walked = 0; walked <= g.jobs.size(); ++walked) {
    const StageJob& node = g.jobs[n];
    const Nanos length = node.end - node.start;
    parts.push_back({PathPartKind::kJob, n, -1, length});
    covered += length;
    if (node.binding < 0) break;
    if (node.stall() > 0) {
      parts.push_back({PathPartKind::kStall, n, -1, node.stall()});
      covered += node.stall();
    }
    if (node.binding_is_input) {
      Nanos lag = 0;
      bool reduce = false;
      for (std::uint32_t k = 0; k < node.inputs; ++k)
        if (g.inputs[node.first_input + k].from == node.binding) {
          lag = g.inputs[node.first_input + k].lag;
          reduce = g.inputs[node.first_input + k].group >= 0;
        }
      parts.push_back({reduce ? PathPartKind::kAllReduce : PathPartKind::kHandOff, n, node.binding, lag});
      covered += lag;
    }
    n = node.binding;
  }
  // What the chain does not cover: the wait before its first job (and overlaps).
  parts.push_back({PathPartKind::kStepStart, n, -1, (g.end - g.start) - covered});
  std::reverse(parts.begin(), parts.end());
  return parts;
}

std::array<ReplayResult, kReplays> Replay(const StepGraph& g, const ReplaySet& set, ReplayScratch& scratch) {
  constexpr size_t K = kReplays;
  constexpr Nanos kNone = std::numeric_limits<Nanos>::min();
  const size_t n = g.jobs.size();
  std::vector<Nanos>& end = scratch.end;
  end.resize((n + g.groups.size()) * K);
  std::array<Nanos, K> hand_off{}, stall{}, last{}, busy{}, ready{};
  for (size_t k = 0; k < K; ++k) {
    hand_off[k] = set.free_hand_offs[k] ? 0 : 1;
    stall[k] = set.no_stall[k] ? 0 : 1;
    last[k] = g.start;
  }
  for (const std::int32_t id : g.order) {
    Nanos* const out = &end[static_cast<size_t>(id) * K];
    if (static_cast<size_t>(id) >= n) {  // a reduce group: its latest sender's end, per replay
      const ReduceGroup& reduce = g.groups[static_cast<size_t>(id) - n];
      std::fill_n(out, K, kNone);
      for (std::uint32_t i = 0; i < reduce.senders; ++i) {
        const Nanos* const sent = &end[static_cast<size_t>(g.group_senders[reduce.first_sender + i]) * K];
        for (size_t k = 0; k < K; ++k) out[k] = std::max(out[k], sent[k]);
      }
      continue;
    }
    const StageJob& node = g.jobs[id];
    if (!node.first_in_lane) std::copy_n(&end[(static_cast<size_t>(id) - 1) * K], K, ready.begin());
    else ready.fill(g.start + node.offset());
    for (std::uint32_t i = 0; i < node.inputs; ++i) {
      const GraphInput& in = g.inputs[node.first_input + i];
      if (in.group < 0) {
        const Nanos* const sent = &end[static_cast<size_t>(in.from) * K];
        for (size_t k = 0; k < K; ++k) ready[k] = std::max(ready[k], sent[k] + in.lag * hand_off[k]);
        continue;
      }
      // The group's latest sender, the receiver's own lane too (it is done by then anyway).
      const Nanos* const latest = &end[(n + static_cast<size_t>(in.group)) * K];
      for (size_t k = 0; k < K; ++k)
        ready[k] = std::max(ready[k], latest[k] + in.lag);  // the all-reduce is no hand-off: no replay frees it
    }
    const Nanos measured = node.end - node.start;
    for (size_t k = 0; k < K; ++k) {
      const Nanos duration = set.durations.empty() ? measured : set.durations[static_cast<size_t>(id) * K + k];
      out[k] = ready[k] + node.stall() * stall[k] + duration;
      last[k] = std::max(last[k], out[k]);
      busy[k] += duration * static_cast<Nanos>(node.members);
    }
  }
  std::array<ReplayResult, K> results{};
  for (size_t k = 0; k < std::min(set.count, K); ++k) results[k] = {last[k] - g.start, busy[k]};
  return results;
}

}  // namespace jobviz
