#include "analyse/run_simulator.h"
#include "analyse/schedule.h"

#include <algorithm>
#include <string>
#include <vector>

namespace jobviz::sim {

Timeline Simulate(const SimRun& run) {
  Timeline t;
  const int ranks = run.pp * run.mp * run.dp;
  const int per = std::max(1, run.per_machine);
  for (int m = 0; m < (ranks + per - 1) / per; ++m) t.machines.emplace_back("machine" + std::to_string(m));
  std::vector<Worker*> worker(ranks);
  for (int r = 0; r < ranks; ++r) {
    Machine& machine = t.machines[r / per];
    machine.workers.emplace_back();
    Worker& w = machine.workers.back();
    w.machine = r / per;
    w.index = r % per;
    if (run.topology) w.role = {r, (r / run.mp) % run.pp, r % run.mp, r / (run.mp * run.pp)};
  }
  for (int r = 0; r < ranks; ++r) worker[r] = &t.machines[r / per].workers[r % per];
  if (run.topology) {
    t.topology.source = TopologySource::kOption;
    t.topology.degrees[static_cast<size_t>(ParallelAxis::kPp)] = run.pp;
    t.topology.degrees[static_cast<size_t>(ParallelAxis::kMp)] = run.mp;
    t.topology.degrees[static_cast<size_t>(ParallelAxis::kDp)] = run.dp;
  }
  const auto rank_of = [&](int replica, int stage, int peer) { return (replica * run.pp + stage) * run.mp + peer; };
  Random random{42}, outliers{4242};
  std::uint64_t line = 1;
  int step = 0;
  const auto duration = [&](Nanos base, int replica, int stage, int peer) {
    double d = static_cast<double>(base) * (1 + run.jitter * (2 * random.Next() - 1)) * (1 + run.drift * step);
    if (auto it = run.stage_factor.find(stage); it != run.stage_factor.end()) d *= it->second;
    if (auto it = run.worker_factor.find({replica, stage, peer}); it != run.worker_factor.end()) d *= it->second;
    if (outliers.Next() < run.outlier_share) d *= run.outlier_factor;
    return static_cast<Nanos>(d);
  };
  const auto latency = [&](int from, int to) {
    auto it = run.link_extra.find({from, to});
    return run.latency + (it != run.link_extra.end() ? it->second : 0);
  };
  Nanos step_start = 1'700'000'000'000'000'000;
  for (step = 0; step < run.steps; ++step) {
    std::vector<std::vector<std::pair<bool, int>>> order(run.pp);
    for (int s = 0; s < run.pp; ++s) order[s] = OneF1BOrder(run.pp, s, run.micro_batches);
    Nanos step_end = step_start;
    std::vector<std::vector<Nanos>> last_backward_end(run.dp, std::vector<Nanos>(run.pp, 0));
    for (int replica = 0; replica < run.dp; ++replica) {
      // Event-driven: each stage runs its order; a job waits for its lane and its input.
      std::vector<std::vector<Nanos>> fwd_end(run.pp, std::vector<Nanos>(run.micro_batches, -1));
      std::vector<std::vector<Nanos>> bwd_end(run.pp, std::vector<Nanos>(run.micro_batches, -1));
      std::vector<size_t> next(run.pp, 0);
      std::vector<Nanos> free(run.pp, step_start);
      for (bool progress = true; progress;) {
        progress = false;
        for (int s = 0; s < run.pp; ++s) {
          while (next[s] < order[s].size()) {
            const auto [forward, mb] = order[s][next[s]];
            Nanos ready = free[s];
            if (forward && s > 0) {
              if (fwd_end[s - 1][mb] < 0) break;
              ready = std::max(ready, fwd_end[s - 1][mb] + latency(s - 1, s));
            }
            if (!forward && s < run.pp - 1) {
              if (bwd_end[s + 1][mb] < 0) break;
              ready = std::max(ready, bwd_end[s + 1][mb] + latency(s + 1, s));
            }
            Nanos end = ready;
            for (int peer = 0; peer < run.mp; ++peer) {  // peers start together, each at its own speed
              const Nanos d = duration(forward ? run.forward : run.backward, replica, s, peer);
              worker[rank_of(replica, s, peer)]->jobs.push_back(
                  Job{"0", forward ? "forward" : "backward", mb, ready, ready + d, line++, step});
              end = std::max(end, ready + d);
            }
            (forward ? fwd_end : bwd_end)[s][mb] = end;
            free[s] = end;
            ++next[s];
            progress = true;
          }
        }
      }
      for (int s = 0; s < run.pp; ++s) last_backward_end[replica][s] = free[s];
    }
    // The optimizer waits for the gradients of every replica of its stage
    // (with a barrier: of every stage too).
    Nanos last_anywhere = 0;
    for (const auto& replica : last_backward_end) last_anywhere = std::max(last_anywhere, *std::max_element(replica.begin(), replica.end()));
    for (int s = 0; s < run.pp; ++s) {
      Nanos ready = 0;
      for (int replica = 0; replica < run.dp; ++replica) ready = std::max(ready, last_backward_end[replica][s]);
      ready = (run.barrier ? last_anywhere : ready) + run.reduce_latency;
      for (int replica = 0; replica < run.dp; ++replica)
        for (int peer = 0; peer < run.mp; ++peer) {
          const Nanos d = duration(run.optimizer, replica, s, peer);
          worker[rank_of(replica, s, peer)]->jobs.push_back(Job{"0", "optimizer", 0, ready, ready + d, line++, step});
          step_end = std::max(step_end, ready + d);
        }
    }
    step_start = step_end + run.step_gap;
  }
  for (Worker* w : worker) std::sort(w->jobs.begin(), w->jobs.end(), StartsBefore);
  return t;
}

Timeline WithSteps(Timeline t) {
  std::map<std::int64_t, StepSpan> spans;
  for (const Worker* w : AllWorkers(t))
    for (const Job& job : w->jobs) {
      auto [it, inserted] = spans.try_emplace(job.step, StepSpan{job.step, job.start, job.end, false});
      it->second.start = std::min(it->second.start, job.start);
      it->second.end = std::max(it->second.end, job.end);
    }
  for (const auto& [step, span] : spans) t.steps.push_back(span);
  return t;
}

}  // namespace jobviz::sim
