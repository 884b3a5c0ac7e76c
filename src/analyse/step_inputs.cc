#include "analyse/step_graph_room.h"

#include <algorithm>
#include <limits>
#include <tuple>

namespace jobviz::step_graph_detail {

namespace {

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

}  // namespace

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

// One reduce group per stage with replicas: the last pass of each of its
// lanes, sorted by end. Under a global all-reduce, one group of every lane.
void GroupReplicas(const GraphLanes& lanes, Room& room, StepGraph* g) {
  room.group_of_lane.assign(lanes.lanes.size(), -1);
  room.group_of_stage.assign(static_cast<size_t>(lanes.stage_count), -1);
  g->global_barrier = WaitsForEveryStage(lanes, room, *g);
  for (size_t l = 0; l < lanes.lanes.size(); ++l) {
    if (room.last_pass[l] < 0 || (!lanes.HasOtherReplicas(l) && !g->global_barrier)) continue;
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

}  // namespace jobviz::step_graph_detail
