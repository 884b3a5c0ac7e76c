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

struct Entry {
  std::uint32_t type = 0;
  std::int64_t micro_batch = 0;
  Nanos start = 0;
  std::uint32_t worker = 0, job = 0, occurrence = 0;
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

// A lane's pass jobs by (pass, chunk): each list in start order.
using PassLists = std::vector<std::pair<std::uint32_t, std::vector<std::int32_t>>>;

// The lane jobs of one lane: peers' jobs matched by (type, micro-batch,
// occurrence), in start order; its pass jobs listed by (pass, chunk).
void BuildLane(const GraphLanes& lanes, int l, const std::vector<std::span<const std::uint32_t>>& step_jobs,
               JobKinds& kinds, StepGraph* g, PassLists* lists, std::vector<Entry>& entries) {
  const StageLane& lane = lanes.lanes[l];
  const size_t first_job = g->jobs.size();
  const auto new_node = [&](const Job& job) {
    StageJob node;
    node.lane = static_cast<std::uint32_t>(l);
    node.type = job.type;
    node.kind = kinds.Of(job.type);
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
    entries.clear();
    for (std::uint32_t w : lane.workers)
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
    std::sort(g->jobs.begin() + static_cast<std::ptrdiff_t>(first_job), g->jobs.end(),
              [](const StageJob& a, const StageJob& b) { return std::tie(a.start, a.end) < std::tie(b.start, b.end); });
  }
  // Each pass job's rank among the lane's jobs of its pass and chunk (the
  // hand-offs pair the k-th forward of one stage with the k-th of the next).
  for (size_t n = first_job; n < g->jobs.size(); ++n) {
    if (n > first_job) g->jobs[n].prev = static_cast<std::int32_t>(n - 1);
    StageJob& node = g->jobs[n];
    if (!IsPass(node.kind.pass)) continue;
    const std::uint32_t key = PassKey(node.kind);
    auto it = std::find_if(lists->begin(), lists->end(), [&](const auto& list) { return list.first == key; });
    if (it == lists->end()) {
      lists->emplace_back(key, std::vector<std::int32_t>());
      it = lists->end() - 1;
    }
    node.rank = static_cast<std::uint32_t>(it->second.size());
    it->second.push_back(static_cast<std::int32_t>(n));
  }
}

// The lane's hand-off index, sorted by (pass, chunk, micro-batch,
// occurrence), with each job's occurrence set: made only for a lane where
// pairing by rank failed (a job missing from one side).
void BuildIndex(std::int32_t first, std::int32_t last, StepGraph* g, std::vector<std::pair<HandOffKey, std::int32_t>>* index) {
  for (std::int32_t n = first; n < last; ++n) {
    const StageJob& node = g->jobs[n];
    if (IsPass(node.kind.pass))
      index->push_back({{static_cast<int>(node.kind.pass), Chunk(node.kind), node.micro_batch, 0}, n});
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
  for (const auto& [key, n] : *index) g->jobs[n].occurrence = key.occurrence;
}

std::int32_t Find(const std::vector<std::pair<HandOffKey, std::int32_t>>& index, const HandOffKey& key) {
  const auto it = std::lower_bound(index.begin(), index.end(), std::make_pair(key, std::int32_t{-1}));
  return it != index.end() && it->first == key ? it->second : -1;
}

// Where each lane's jobs are, their pass lists, and (made on demand) their
// hand-off index.
struct LaneIndex {
  std::vector<std::pair<std::int32_t, std::int32_t>> range;  // [first, last) job ids per lane
  std::vector<PassLists> lists;
  std::vector<std::vector<std::pair<HandOffKey, std::int32_t>>> index;
  std::vector<bool> indexed;
  void Index(int lane, StepGraph* g) {
    if (indexed[lane]) return;
    BuildIndex(range[lane].first, range[lane].second, g, &index[lane]);
    indexed[lane] = true;
  }
};

// The job of lane `from_lane` that hands over to `node` as (pass, chunk): the
// one of the same rank in its pass list, when its micro-batch agrees; else
// the one with the same micro-batch and occurrence (a job missing on one side).
std::int32_t Sender(LaneIndex& lanes, int from_lane, Pass pass, int chunk, std::int32_t n, StepGraph* g) {
  const StageJob& node = g->jobs[n];
  const PassLists& lists = lanes.lists[from_lane];
  const std::uint32_t key = PassKey(pass, chunk);
  const auto it = std::find_if(lists.begin(), lists.end(), [&](const auto& list) { return list.first == key; });
  if (it == lists.end()) return -1;
  if (node.rank < it->second.size() && g->jobs[it->second[node.rank]].micro_batch == node.micro_batch)
    return it->second[node.rank];
  lanes.Index(static_cast<int>(node.lane), g);  // the node's occurrence
  lanes.Index(from_lane, g);
  return Find(lanes.index[from_lane], {static_cast<int>(pass), chunk, node.micro_batch, g->jobs[n].occurrence});
}

// The senders of node n's inputs.
void AddInputs(const GraphLanes& lanes, LaneIndex& index, const std::vector<std::int32_t>& last_pass, std::int32_t n,
               StepGraph* g, bool after_last_pass, std::vector<std::pair<std::int32_t, std::int32_t>>* edges) {
  const StageJob& node = g->jobs[n];
  const StageLane& lane = lanes.lanes[node.lane];
  const int chunk = Chunk(node.kind);
  const auto add = [&](int from_lane, Pass pass, int from_chunk) {
    if (from_lane < 0) return false;
    const std::int32_t from = Sender(index, from_lane, pass, from_chunk, n, g);
    if (from >= 0) edges->emplace_back(from, n);
    return from >= 0;
  };
  switch (node.kind.pass) {
    case Pass::kForward:
      if (lane.before >= 0) add(lane.before, Pass::kForward, chunk);
      else if (lane.first == static_cast<int>(node.lane) && chunk > 0) add(lane.last, Pass::kForward, chunk - 1);
      break;
    case Pass::kBackward:
    case Pass::kBackwardInput: {
      const Pass other = node.kind.pass == Pass::kBackward ? Pass::kBackwardInput : Pass::kBackward;
      if (lane.after >= 0) {
        if (!add(lane.after, node.kind.pass, chunk)) add(lane.after, other, chunk);
      } else if (lane.last == static_cast<int>(node.lane)) {
        if (!add(lane.first, node.kind.pass, chunk + 1)) add(lane.first, other, chunk + 1);
      }
      break;
    }
    case Pass::kBackwardWeight:
      break;
    case Pass::kOther:
      // The optimizer's gradients are reduced across replicas: the first job
      // after the lane's last pass waits for the other replicas' last pass.
      if (after_last_pass)
        for (int o : lane.other_replicas)
          if (last_pass[o] >= 0) edges->emplace_back(last_pass[o], n);
      break;
  }
}

// Gaps: per link, the median wait of a receiver that was free when the
// sender ended is the link's typical latency; a job's wait is hand-off
// latency up to its latest input's arrival, stall after it (docs/analysis.md).
void ClassifyGaps(const GraphLanes& lanes, StepGraph* g) {
  // Links by receiving stage and where the input comes from: the stage
  // before, the stage after, the same stage of another replica, or the
  // other end of the pipeline (interleaved wrap-around).
  const auto link = [&](const StageJob& from, const StageJob& to) {
    const int from_stage = lanes.lanes[from.lane].stage, to_stage = lanes.lanes[to.lane].stage;
    const int kind = from_stage == to_stage - 1 ? 0 : from_stage == to_stage + 1 ? 1 : from_stage == to_stage ? 2 : 3;
    return static_cast<size_t>(lanes.stage_rank[to.lane]) * 4 + static_cast<size_t>(kind);
  };
  const size_t links = static_cast<size_t>(lanes.stage_count) * 4;
  std::vector<std::pair<std::uint32_t, Nanos>> samples;
  for (const StageJob& node : g->jobs) {
    const Nanos lane_free = node.prev >= 0 ? g->jobs[node.prev].end : g->start;
    std::int32_t latest = -1;
    for (std::uint32_t k = 0; k < node.inputs; ++k) {
      const std::int32_t from = g->inputs[node.first_input + k].from;
      if (latest < 0 || g->jobs[from].end > g->jobs[latest].end) latest = from;
    }
    if (latest >= 0 && g->jobs[latest].end >= lane_free)
      samples.emplace_back(static_cast<std::uint32_t>(link(g->jobs[latest], node)), node.start - g->jobs[latest].end);
  }
  // Each link's median (nearest rank), with the samples bucketed by link in one pass.
  std::vector<std::uint32_t> begin(links + 1, 0);
  for (const auto& [slot, gap] : samples) ++begin[slot + 1];
  for (size_t k = 0; k < links; ++k) begin[k + 1] += begin[k];
  std::vector<Nanos> gaps(samples.size());
  std::vector<std::uint32_t> fill(begin.begin(), begin.end() - 1);
  for (const auto& [slot, gap] : samples) gaps[fill[slot]++] = gap;
  std::vector<Nanos> typical(links, 0);
  for (size_t k = 0; k < links; ++k)
    if (begin[k + 1] > begin[k]) {
      const auto first = gaps.begin() + begin[k], last = gaps.begin() + begin[k + 1];
      const auto at = first + (last - first - 1) / 2;
      std::nth_element(first, at, last);
      typical[k] = *at;
    }
  for (StageJob& node : g->jobs) {
    const bool first = node.prev < 0;
    const Nanos lane_free = first ? g->start : g->jobs[node.prev].end;
    if (!first && lane_free > node.start) ++g->overlaps;
    std::int32_t latest = -1;
    GraphInput* latest_input = nullptr;
    Nanos arrival = std::numeric_limits<Nanos>::min();
    for (std::uint32_t k = 0; k < node.inputs; ++k) {
      GraphInput& in = g->inputs[node.first_input + k];
      const StageJob& from = g->jobs[in.from];
      in.lag = std::min(typical[link(from, node)], node.start - from.end);
      if (latest < 0 || from.end > g->jobs[latest].end) latest = in.from;
      if (from.end + in.lag > arrival) {
        arrival = from.end + in.lag;
        latest_input = &in;
      }
    }
    if (latest >= 0 && g->jobs[latest].end >= lane_free) {  // the input came last: all of the wait is the hand-off
      for (std::uint32_t k = 0; k < node.inputs; ++k)
        if (g->inputs[node.first_input + k].from == latest) g->inputs[node.first_input + k].lag = node.start - g->jobs[latest].end;
      node.binding = latest;
      node.binding_is_input = true;
      continue;
    }
    if (latest_input && arrival > lane_free) {  // the worker was busy past the sender's end, the data later still
      node.binding = latest_input->from;
      node.binding_is_input = true;
      node.stall = node.start - arrival;
      continue;
    }
    if (first) {
      node.offset = node.start - g->start;
      continue;
    }
    node.binding = node.prev;
    node.stall = std::max<Nanos>(0, node.start - lane_free);
  }
}

// A topological order of the jobs (Kahn's algorithm, linear): every job
// after its lane's previous job and its inputs. Jobs in a cycle (only jobs of zero
// length at one instant can form one) lose their inputs from each other.
void OrderForReplay(StepGraph* g) {
  const size_t n = g->jobs.size();
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::vector<std::uint32_t> waiting(n, 0), consumers_begin(n + 1, 0), consumers(g->inputs.size());
    for (size_t k = 0; k < n; ++k) {
      const StageJob& node = g->jobs[k];
      waiting[k] = (node.prev >= 0) + node.inputs;
      for (std::uint32_t i = 0; i < node.inputs; ++i) ++consumers_begin[g->inputs[node.first_input + i].from + 1];
    }
    for (size_t k = 0; k < n; ++k) consumers_begin[k + 1] += consumers_begin[k];
    std::vector<std::uint32_t> fill(consumers_begin.begin(), consumers_begin.end() - 1);
    for (size_t k = 0; k < n; ++k) {
      const StageJob& node = g->jobs[k];
      for (std::uint32_t i = 0; i < node.inputs; ++i)
        consumers[fill[g->inputs[node.first_input + i].from]++] = static_cast<std::uint32_t>(k);
    }
    g->order.clear();
    for (size_t k = 0; k < n; ++k)
      if (waiting[k] == 0) g->order.push_back(static_cast<std::int32_t>(k));
    for (size_t head = 0; head < g->order.size(); ++head) {
      const std::int32_t k = g->order[head];
      const auto done = [&](size_t next) {
        if (--waiting[next] == 0) g->order.push_back(static_cast<std::int32_t>(next));
      };
      if (static_cast<size_t>(k) + 1 < n && g->jobs[k + 1].prev == k) done(static_cast<size_t>(k) + 1);
      for (std::uint32_t c = consumers_begin[k]; c < consumers_begin[k + 1]; ++c) done(consumers[c]);
    }
    if (g->order.size() == n) break;
    // Break the cycles: inputs between jobs not reached are dropped (counted).
    std::vector<bool> reached(n, false);
    for (std::int32_t k : g->order) reached[k] = true;
    std::vector<GraphInput> kept;
    for (size_t k = 0; k < n; ++k) {
      StageJob& node = g->jobs[k];
      const std::uint32_t first = static_cast<std::uint32_t>(kept.size());
      for (std::uint32_t i = 0; i < node.inputs; ++i) {
        const GraphInput& in = g->inputs[node.first_input + i];
        if (!reached[k] && !reached[in.from]) ++g->contradicted;
        else kept.push_back(in);
      }
      node.first_input = first;
      node.inputs = static_cast<std::uint32_t>(kept.size() - first);
    }
    g->inputs = std::move(kept);
  }
}

// What a replay reads, in the topological order, one entry after the other
// (the jobs themselves stay in lane order, where a lane's jobs sit together).
void BuildReplayPlan(StepGraph* g) {
  std::vector<std::int32_t> entry_of(g->jobs.size());
  for (size_t p = 0; p < g->order.size(); ++p) entry_of[g->order[p]] = static_cast<std::int32_t>(p);
  g->replay.resize(g->order.size());
  g->replay_inputs.clear();
  g->replay_inputs.reserve(g->inputs.size());
  for (size_t p = 0; p < g->order.size(); ++p) {
    const StageJob& node = g->jobs[g->order[p]];
    ReplayEntry& e = g->replay[p];
    e.job = g->order[p];
    e.prev = node.prev >= 0 ? entry_of[node.prev] : -1;
    e.first_input = static_cast<std::uint32_t>(g->replay_inputs.size());
    for (std::uint32_t i = 0; i < node.inputs; ++i) {
      const GraphInput& in = g->inputs[node.first_input + i];
      g->replay_inputs.push_back({entry_of[in.from], in.lag});
    }
    e.inputs = node.inputs;
    e.offset = node.offset;
    e.stall = node.stall;
    e.duration = node.end - node.start;
    e.members = node.members;
  }
}

}  // namespace

StepGraph BuildStepGraph(const GraphLanes& lanes, const std::vector<std::span<const std::uint32_t>>& step_jobs,
                         bool for_replays) {
  StepGraph g;
  // Sized once: a step of a large run holds a job per job of the step, and
  // vectors that double on the way would leave up to half of them unused.
  size_t step_job_count = 0;
  for (size_t w = 0; w < step_jobs.size(); ++w)
    if (lanes.lane_of[w] >= 0) step_job_count += step_jobs[w].size();
  g.jobs.reserve(step_job_count);
  g.members.reserve(step_job_count);
  JobKinds kinds;
  LaneIndex index;
  index.lists.resize(lanes.lanes.size());
  index.index.resize(lanes.lanes.size());
  index.indexed.assign(lanes.lanes.size(), false);
  std::vector<std::pair<std::int32_t, std::int32_t>>& lane_range = index.range;
  lane_range.resize(lanes.lanes.size());
  std::vector<Entry> entries;
  for (size_t l = 0; l < lanes.lanes.size(); ++l) {
    lane_range[l].first = static_cast<std::int32_t>(g.jobs.size());
    BuildLane(lanes, static_cast<int>(l), step_jobs, kinds, &g, &index.lists[l], entries);
    lane_range[l].second = static_cast<std::int32_t>(g.jobs.size());
  }
  if (g.jobs.empty()) return g;
  for (size_t w = 0; w < step_jobs.size(); ++w) g.graph_workers += !step_jobs[w].empty() && lanes.lane_of[w] >= 0;
  // Each lane's last pass job (by end): the optimizer's other replicas wait for it.
  std::vector<std::int32_t> last_pass(lanes.lanes.size(), -1);
  std::vector<std::int32_t> first_after_pass(lanes.lanes.size(), -1);
  for (size_t l = 0; l < lanes.lanes.size(); ++l) {
    std::int32_t last_in_order = -1;
    for (std::int32_t n = lane_range[l].first; n < lane_range[l].second; ++n)
      if (IsPass(g.jobs[n].kind.pass)) {
        last_in_order = n;
        if (last_pass[l] < 0 || g.jobs[n].end > g.jobs[last_pass[l]].end) last_pass[l] = n;
      }
    if (last_in_order >= 0 && last_in_order + 1 < lane_range[l].second) first_after_pass[l] = last_in_order + 1;
  }
  std::vector<std::pair<std::int32_t, std::int32_t>> edges;  // (from, to)
  edges.reserve(g.jobs.size());
  g.inputs.reserve(g.jobs.size());
  for (size_t l = 0; l < lanes.lanes.size(); ++l)
    for (std::int32_t n = lane_range[l].first; n < lane_range[l].second; ++n)
      AddInputs(lanes, index, last_pass, n, &g, first_after_pass[l] == n, &edges);
  // Each job's inputs (edges come grouped by receiver, in receiver order);
  // a hand-off whose sender ended after the receiver began is one the clocks
  // contradict.
  g.start = g.jobs.front().start;
  g.end = g.jobs.front().end;
  for (const StageJob& node : g.jobs) {
    g.start = std::min(g.start, node.start);
    g.end = std::max(g.end, node.end);
  }
  size_t e = 0;
  for (size_t n = 0; n < g.jobs.size(); ++n) {
    StageJob& node = g.jobs[n];
    node.first_input = static_cast<std::uint32_t>(g.inputs.size());
    for (; e < edges.size() && edges[e].second == static_cast<std::int32_t>(n); ++e) {
      if (g.jobs[edges[e].first].end > node.start) {
        ++g.contradicted;
        continue;
      }
      g.inputs.push_back({edges[e].first, 0});
    }
    node.inputs = static_cast<std::uint32_t>(g.inputs.size() - node.first_input);
  }
  if (for_replays) OrderForReplay(&g);
  ClassifyGaps(lanes, &g);
  if (for_replays) BuildReplayPlan(&g);
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
    if (node.stall > 0) {
      parts.push_back({PathPartKind::kStall, n, -1, node.stall});
      covered += node.stall;
    }
    if (node.binding_is_input) {
      Nanos lag = 0;
      for (std::uint32_t k = 0; k < node.inputs; ++k)
        if (g.inputs[node.first_input + k].from == node.binding) lag = g.inputs[node.first_input + k].lag;
      parts.push_back({PathPartKind::kHandOff, n, node.binding, lag});
      covered += lag;
    }
    n = node.binding;
  }
  // What the chain does not cover: the wait before its first job (and overlaps).
  parts.push_back({PathPartKind::kStepStart, n, -1, (g.end - g.start) - covered});
  std::reverse(parts.begin(), parts.end());
  return parts;
}

ReplayResult Replay(const StepGraph& g, const ReplayChange& change, std::vector<Nanos>& end) {
  ReplayResult r;
  end.assign(g.replay.size(), 0);
  Nanos last = g.start;
  for (size_t p = 0; p < g.replay.size(); ++p) {
    const ReplayEntry& e = g.replay[p];
    Nanos ready = e.prev >= 0 ? end[e.prev] : g.start + e.offset;
    for (std::uint32_t k = 0; k < e.inputs; ++k) {
      const auto& [from, lag] = g.replay_inputs[e.first_input + k];
      ready = std::max(ready, end[from] + (change.free_hand_offs ? 0 : lag));
    }
    if (!change.no_stall) ready += e.stall;
    const Nanos duration = change.durations.empty() ? e.duration : change.durations[e.job];
    end[p] = ready + duration;
    last = std::max(last, end[p]);
    r.busy += duration * static_cast<Nanos>(e.members);
  }
  r.step_time = last - g.start;
  return r;
}

}  // namespace jobviz
