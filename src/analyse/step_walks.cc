#include "analyse/step_walks.h"

#include "analyse/step_graph_room.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

namespace jobviz {

namespace step_graph_detail {

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

}  // namespace step_graph_detail

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
