#include "model/topology_inference.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "model/time_value.h"
#include "read/parallel_for.h"

namespace jobviz {

namespace {

// Peers of one stage finish their collectives together: their jobs start and
// end within microseconds. Replicas drift by far more within a step.
constexpr Nanos kLockstepFloor = 20'000;   // 20 us
constexpr double kLockstepShare = 0.02;    // or 2% of the median job
constexpr double kLockstepQuorum = 0.9;    // of the jobs within the tolerance

Nanos MedianDuration(const Worker& worker) {
  std::vector<Nanos> durations;
  for (const Job& job : worker.jobs) durations.push_back(job.end - job.start);
  if (durations.empty()) return 0;
  std::nth_element(durations.begin(), durations.begin() + static_cast<std::ptrdiff_t>(durations.size() / 2), durations.end());
  return durations[durations.size() / 2];
}

// What the warm-up needs of a job type, worked out once per type: millions
// of jobs share a handful of types.
struct TypeFlags {
  bool forward = false, backward = false;
  bool chunked = false;  // forward1, backward0, backward_b, backward_w: not plain 1F1B
};
TypeFlags FlagsOf(const std::string& text) {
  TypeFlags flags;
  flags.forward = text.rfind("forward", 0) == 0;
  flags.backward = text.rfind("backward", 0) == 0;
  flags.chunked = (flags.forward && text != "forward") || (flags.backward && text != "backward");
  return flags;
}
using TypeFlagsCache = PerName<TypeFlags, FlagsOf>;

struct WarmUp {
  int forwards = 0;      // before the first backward of a step: the most common count
  bool chunked = false;  // some job type is not plain forward/backward
};

// One pass over the jobs in start order, where a step's jobs follow each other.
WarmUp CountWarmUp(const Worker& worker, TypeFlagsCache& types) {
  std::map<int, int> votes;
  WarmUp result;
  std::int64_t step = kNoStep;
  int forwards = 0;
  bool counting = false;
  for (const Job& job : worker.jobs) {
    const TypeFlags flags = types.Of(job.type);
    result.chunked |= flags.chunked;
    if (!counting || job.step != step) {
      step = job.step;
      forwards = 0;
      counting = true;
    }
    if (forwards < 0) continue;  // this step's first backward was seen
    if (flags.backward) {
      ++votes[forwards];
      forwards = -1;
    } else if (flags.forward) {
      ++forwards;
    }
  }
  int best_votes = 0;
  for (const auto& [count, n] : votes)
    if (n > best_votes) result.forwards = count, best_votes = n;
  return result;
}

}  // namespace

bool InLockstep(const Worker& a, const Worker& b) {
  if (a.jobs.empty() || a.jobs.size() != b.jobs.size()) return false;
  // The same jobs in the same order first: it fails at once for two stages.
  for (size_t i = 0; i < a.jobs.size(); ++i)
    if (a.jobs[i].type != b.jobs[i].type || a.jobs[i].micro_batch != b.jobs[i].micro_batch) return false;
  // Jobs within `tolerance` of each other; stops once too many are not.
  const size_t quorum = static_cast<size_t>(std::ceil(kLockstepQuorum * static_cast<double>(a.jobs.size())));
  const auto enough_close = [&](Nanos tolerance) {
    size_t apart = 0;
    for (size_t i = 0; i < a.jobs.size(); ++i) {
      apart += std::abs(SaturatingSub(a.jobs[i].start, b.jobs[i].start)) > tolerance ||
               std::abs(SaturatingSub(a.jobs[i].end, b.jobs[i].end)) > tolerance;
      if (apart > a.jobs.size() - quorum) return false;
    }
    return true;
  };
  const auto tolerance_of = [](Nanos duration) {
    return std::max<Nanos>(kLockstepFloor, static_cast<Nanos>(kLockstepShare * static_cast<double>(duration)));
  };
  // First against a bound of the tolerance from the longest job (no median
  // to compute): stages that run the same sequence apart fail here.
  Nanos longest = 0;
  for (size_t i = 0; i < a.jobs.size(); ++i)
    longest = std::max({longest, a.jobs[i].end - a.jobs[i].start, b.jobs[i].end - b.jobs[i].start});
  if (!enough_close(tolerance_of(longest))) return false;
  return enough_close(tolerance_of(std::max(MedianDuration(a), MedianDuration(b))));
}

void InferTopology(Timeline* timeline, int threads) {
  // Peer groups: runs of consecutive workers of one machine in lockstep with
  // the run's first worker. Machines are independent: each on its own thread.
  std::vector<std::vector<std::vector<Worker*>>> by_machine(timeline->machines.size());
  ParallelFor(by_machine.size(), threads, [&](size_t m) {
    std::vector<std::vector<Worker*>>& groups = by_machine[m];
    for (Worker& worker : timeline->machines[m].workers)
      if (!groups.empty() && InLockstep(*groups.back().front(), worker))
        groups.back().push_back(&worker);
      else
        groups.push_back({&worker});
  });
  std::vector<std::vector<Worker*>> groups;
  size_t workers = 0;
  for (auto& machine_groups : by_machine)
    for (auto& group : machine_groups) {
      workers += group.size();
      groups.push_back(std::move(group));
    }
  if (workers < 2) return;
  const size_t peers = groups.front().size();
  const bool uniform = std::all_of(groups.begin(), groups.end(), [&](const auto& g) { return g.size() == peers; });
  if (!uniform) return;  // groups of mixed sizes: no consistent tensor-parallel degree
  // Stages: by warm-up count under 1F1B (p - s forwards before the first
  // backward on stage s); replicas are the stages that repeat.
  std::vector<WarmUp> warm_ups(groups.size());
  ParallelFor(groups.size(), threads, [&](size_t g) {
    thread_local TypeFlagsCache types;  // (names mean the same to every thread and run)
    warm_ups[g] = CountWarmUp(*groups[g].front(), types);
  });
  std::vector<int> warm(groups.size());
  bool chunks = false;
  for (size_t g = 0; g < groups.size(); ++g) {
    warm[g] = warm_ups[g].forwards;
    chunks |= warm_ups[g].chunked;
  }
  const int p = *std::max_element(warm.begin(), warm.end());
  std::map<int, int> per_stage;
  for (const int w : warm) ++per_stage[w];
  const bool by_warm_up = !chunks && p >= 2 && static_cast<int>(per_stage.size()) == p && per_stage.begin()->first == 1 &&
                          std::all_of(per_stage.begin(), per_stage.end(), [&](const auto& s) {
                            return s.second == per_stage.begin()->second;
                          });
  if (peers == 1 && (!by_warm_up || per_stage.begin()->second == 1)) return;  // nothing beyond today's guess
  Topology& topology = timeline->topology;
  topology.source = TopologySource::kInferred;
  const int replicas = by_warm_up ? per_stage.begin()->second : 1;
  const int stages = by_warm_up ? p : static_cast<int>(groups.size());
  topology.degrees = {replicas, stages, 1, 1, static_cast<std::int32_t>(peers)};
  std::map<int, int> next_replica;  // by stage
  for (size_t g = 0; g < groups.size(); ++g) {
    const int stage = by_warm_up ? p - warm[g] : static_cast<int>(g);
    const int replica = by_warm_up ? next_replica[stage]++ : 0;
    for (size_t k = 0; k < groups[g].size(); ++k)
      groups[g][k]->role = {-1, stage, static_cast<int>(k), replica};
  }
  topology.detail = peers > 1 ? "mp" + std::to_string(peers) + " from workers in lockstep, " : "no peers in lockstep, ";
  topology.detail += by_warm_up ? "stages from the 1F1B warm-up" : "stages in rank order";
  topology.detail += "; likely, not certain (--topology settles it)";
}

}  // namespace jobviz
