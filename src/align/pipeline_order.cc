#include "align/pipeline_order.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>

namespace jobviz {

Direction DirectionOf(const std::string& type) {
  if (type.rfind("forward", 0) == 0) return Direction::kForward;
  if (type.rfind("backward", 0) == 0 && type.rfind("backward_w", 0) != 0) return Direction::kBackward;
  return Direction::kOther;
}

namespace {

// A hand-off job of a stage with its pairing key: (type, micro-batch,
// occurrence), where occurrence counts the earlier jobs of the same type and
// micro-batch on the worker.
struct StageJob {
  std::uint32_t type;  // Name::index()
  std::int64_t micro_batch;
  std::uint32_t occurrence;
  bool forward;  // else backward (the walk visits no other kind)
  const Job* job;
  auto Key() const { return std::tie(type, micro_batch, occurrence); }
};

// One stage's hand-off jobs (of the directions walked), sorted by key: two
// neighbouring stages then pair up in one merge, with no hash map per stage.
struct Stage {
  int machine;
  const Worker* worker;
  std::vector<StageJob> jobs;
};

bool Wanted(Direction direction, const HandOffWalk& walk) {
  return (direction == Direction::kForward && walk.forward) || (direction == Direction::kBackward && walk.backward);
}

// Sorts by (type, micro-batch), stably, as std::stable_sort would. Every
// run has a handful of hand-off types and micro-batches 0..M, so a counting
// sort does it in two passes (the merge sort was most of the hand-off
// pairing, which runs for clock checks and for the traces' flow arrows);
// keys spread wider than that take the merge sort.
void SortByTypeAndMicroBatch(std::vector<StageJob>& jobs) {
  constexpr size_t kMostTypes = 8;
  std::array<std::uint32_t, kMostTypes> types{};
  size_t type_count = 0;
  std::int64_t low = std::numeric_limits<std::int64_t>::max(), high = std::numeric_limits<std::int64_t>::min();
  bool countable = true;
  for (const StageJob& job : jobs) {
    if (std::find(types.begin(), types.begin() + type_count, job.type) == types.begin() + type_count) {
      if (type_count == kMostTypes) {
        countable = false;
        break;
      }
      types[type_count++] = job.type;
    }
    low = std::min(low, job.micro_batch);
    high = std::max(high, job.micro_batch);
  }
  const auto by_key = [](const StageJob& a, const StageJob& b) {
    return std::tie(a.type, a.micro_batch) < std::tie(b.type, b.micro_batch);
  };
  // Micro-batches from 0 (or any low) over a span no wider than a few times the jobs.
  countable = countable && jobs.size() > 1 && low >= 0 && high < (std::int64_t{1} << 31) &&
              static_cast<size_t>(high - low) < 4 * jobs.size() + 64;
  if (!countable) {
    std::stable_sort(jobs.begin(), jobs.end(), by_key);
    return;
  }
  for (size_t i = 1; i < type_count; ++i)  // a handful: insertion sort
    for (size_t j = i; j > 0 && types[j - 1] > types[j]; --j) std::swap(types[j - 1], types[j]);
  const size_t span = static_cast<size_t>(high - low) + 1;
  const auto bucket = [&](const StageJob& job) {
    const size_t rank = static_cast<size_t>(std::find(types.begin(), types.begin() + type_count, job.type) - types.begin());
    return rank * span + static_cast<size_t>(job.micro_batch - low);
  };
  std::vector<std::uint32_t> starts(type_count * span + 1, 0);
  for (const StageJob& job : jobs) ++starts[bucket(job) + 1];
  for (size_t b = 1; b < starts.size(); ++b) starts[b] += starts[b - 1];
  std::vector<StageJob> sorted(jobs.size());
  for (const StageJob& job : jobs) sorted[starts[bucket(job)]++] = job;
  jobs.swap(sorted);
}

Stage BuildStage(int machine, const Worker& worker, const HandOffWalk& walk) {
  Stage stage{machine, &worker, {}};
  stage.jobs.reserve(worker.jobs.size());  // once, not grown: it is built for every walk of every chain
  DirectionsByType directions;
  for (const Job& job : worker.jobs) {  // sorted by start: the occurrences come out in that order
    const Direction direction = directions.Of(job.type);
    if (Wanted(direction, walk))
      stage.jobs.push_back({job.type.index(), job.micro_batch, 0, direction == Direction::kForward, &job});
  }
  SortByTypeAndMicroBatch(stage.jobs);
  for (size_t i = 1; i < stage.jobs.size(); ++i) {
    const StageJob& before = stage.jobs[i - 1];
    StageJob& job = stage.jobs[i];
    if (job.type == before.type && job.micro_batch == before.micro_batch) job.occurrence = before.occurrence + 1;
  }
  return stage;
}

// The pairing of stage `s` (`here`) with `s + 1` (`next`), by here's jobs,
// which are in start order (sorted by start when the timeline is built;
// clock alignment shifts a machine's times without reordering them), so
// a walk by index visits them by start. `partners`: room, reused.
StagePairing PairStages(const Stage& here, const Stage& next, int s, std::vector<StagePairing::Partner>& partners) {
  const Job* const first = here.worker->jobs.data();
  // A partner of the same type whose direction is the hand-off's (decided once in BuildStage).
  partners.assign(here.worker->jobs.size(), {});
  auto a = here.jobs.begin(), b = next.jobs.begin();
  while (a != here.jobs.end() && b != next.jobs.end()) {
    if (a->Key() < b->Key()) {
      ++a;
    } else if (b->Key() < a->Key()) {
      ++b;
    } else {
      partners[static_cast<size_t>(a->job - first)] = {b->job, b->forward};
      ++a, ++b;
    }
  }
  return {s, here.machine, next.machine, here.worker, next.worker, partners};
}

}  // namespace

std::vector<std::pair<int, const Worker*>> WorkersInStageOrder(const Timeline& timeline) {
  std::vector<std::pair<int, const Worker*>> order;
  if (timeline.stage_order.empty()) {
    for (size_t m = 0; m < timeline.machines.size(); ++m)
      for (const Worker& worker : timeline.machines[m].workers) order.emplace_back(static_cast<int>(m), &worker);
  } else {
    for (const auto& [m, index] : timeline.stage_order)
      for (const Worker& worker : timeline.machines[m].workers)
        if (worker.index == index) order.emplace_back(m, &worker);
  }
  return order;
}

std::vector<PipelineChain> PipelineChains(const Timeline& timeline) {
  if (!timeline.topology.hybrid()) {
    PipelineChain one{0, 0, WorkersInStageOrder(timeline), {}};
    for (size_t s = 0; s < one.stages.size(); ++s) one.numbers.push_back(static_cast<int>(s));
    return {std::move(one)};
  }
  // By (replica, peer): each worker with its stage, then sorted by stage.
  std::map<std::pair<int, int>, std::vector<std::tuple<int, int, const Worker*>>> members;
  for (size_t m = 0; m < timeline.machines.size(); ++m)
    for (const Worker& worker : timeline.machines[m].workers)
      if (worker.role.known())
        members[{worker.role.replica, worker.role.peer}].emplace_back(worker.role.stage, static_cast<int>(m), &worker);
  std::vector<PipelineChain> out;
  for (auto& [key, entries] : members) {
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
    PipelineChain chain{key.first, key.second, {}, {}};
    for (const auto& [stage, machine, worker] : entries) {
      chain.stages.emplace_back(machine, worker);
      chain.numbers.push_back(stage);
    }
    out.push_back(std::move(chain));
  }
  return out;
}

bool ResolveStageOrder(const std::vector<StageRef>& stages, const Timeline& timeline,
                       std::vector<std::pair<int, int>>* order, std::string* error) {
  for (const StageRef& stage : stages) {
    int machine = -1;
    for (size_t m = 0; m < timeline.machines.size(); ++m)
      if (timeline.machines[m].name == stage.machine) machine = static_cast<int>(m);
    bool found = false;
    if (machine >= 0)
      for (const Worker& w : timeline.machines[machine].workers) found |= w.index == stage.worker;
    if (!found) {
      *error = "--stage_order: '" + stage.text + "' is not MACHINE:WORKER of a log read";
      return false;
    }
    order->emplace_back(machine, stage.worker);
  }
  size_t workers = 0;
  for (const Machine& m : timeline.machines) workers += m.workers.size();
  if (order->size() != workers) {
    *error = "--stage_order names " + std::to_string(order->size()) + " of the " + std::to_string(workers) +
             " workers read; name each once";
    return false;
  }
  return true;
}

void ForEachStagePairing(const PipelineChain& chain, const std::function<void(const StagePairing&)>& visit,
                         const HandOffWalk& walk) {
  const std::vector<std::pair<int, const Worker*>>& order = chain.stages;
  if (order.size() < 2) return;
  // Two neighbouring stages at a time: the sorted jobs of a run are never
  // all in memory together. The last two built are kept for the next pair.
  std::array<std::pair<size_t, std::optional<Stage>>, 2> built;
  const auto stage = [&](size_t s, size_t keep) -> const Stage& {
    for (auto& [index, cached] : built)
      if (cached && index == s) return *cached;
    auto& slot = built[0].second && built[0].first == keep ? built[1] : built[0];
    slot.first = s;
    slot.second.reset();  // free the old stage's jobs before building the new one
    slot.second = BuildStage(order[s].first, *order[s].second, walk);
    return *slot.second;
  };
  std::vector<StagePairing::Partner> partners;
  const size_t pairs = order.size() - 1;
  for (size_t k = 0; k < pairs; ++k) {
    const size_t s = walk.last_stage_first ? pairs - 1 - k : k;
    if (chain.numbers[s + 1] != chain.numbers[s] + 1) continue;  // a stage between whose log was not read
    if (walk.across_machines_only && order[s].first == order[s + 1].first) continue;
    // `other` is mostly the stage the previous pair shares: it stays while the next one is built.
    const size_t shared = walk.last_stage_first ? s : s + 1, other = walk.last_stage_first ? s + 1 : s;
    const Stage& other_stage = stage(other, other);
    const Stage& shared_stage = stage(shared, other);
    const Stage& here = s == shared ? shared_stage : other_stage;
    const Stage& next = s == shared ? other_stage : shared_stage;
    visit(PairStages(here, next, chain.numbers[s], partners));
  }
}

void ForEachHandOffInChain(const PipelineChain& chain, const std::function<void(const HandOff&)>& visit,
                           const HandOffWalk& walk) {
  ForEachStagePairing(chain, [&](const StagePairing& p) {
    const Job* const first = p.lower->jobs.data();
    for (size_t i = 0; i < p.partners.size(); ++i) {
      const StagePairing::Partner& other = p.partners[i];
      if (!other.job) continue;
      if (other.forward)
        visit({first + i, other.job, p.lower_machine, p.upper_machine, p.lower, p.upper, p.stage, true});
      else
        visit({other.job, first + i, p.upper_machine, p.lower_machine, p.upper, p.lower, p.stage, false});
    }
  }, walk);
}

void ForEachHandOff(const Timeline& timeline, const std::function<void(const HandOff&)>& visit,
                    const HandOffWalk& walk) {
  for (const PipelineChain& chain : PipelineChains(timeline)) ForEachHandOffInChain(chain, visit, walk);
}

}  // namespace jobviz
