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
