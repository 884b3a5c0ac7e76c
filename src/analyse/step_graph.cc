#include "analyse/step_graph.h"

#include "analyse/step_graph_room.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

#include "align/pipeline_order.h"
#include "model/time_value.h"

namespace jobviz {

using namespace step_graph_detail;


StepGraphRoom::StepGraphRoom() : impl(std::make_unique<Impl>()) {}
StepGraphRoom::~StepGraphRoom() = default;

namespace {

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

}  // namespace jobviz
