#include "analyse/hybrid_analysis.h"

#include "model/unfinished_steps.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "analyse/analysis.h"
#include "analyse/schedule.h"
#include "read/parallel_for.h"

namespace jobviz {

namespace {

PassStats Stats(std::vector<Nanos> durations) {
  PassStats stats;
  stats.count = durations.size();
  if (durations.empty()) return stats;
  Nanos total = 0;
  for (const Nanos d : durations) total = SaturatingAdd(total, d);
  stats.mean = total / static_cast<Nanos>(durations.size());
  stats.p95 = PercentileOf(durations, 95);
  return stats;
}

bool IsComputePass(Pass pass) { return pass != Pass::kOther; }

Pass PassOf(const std::string& type) { return ClassifyJobType(type).pass; }
// ClassifyJobType's pass for a run's jobs, each type worked out once.
using PassesByType = PerName<Pass, PassOf>;

}  // namespace

std::vector<StageAnalysis> AnalyzeStages(const Timeline& timeline, const std::vector<WorkerAnalysis>& workers,
                                         int threads) {
  const UnfinishedStepSet unfinished(timeline);  // a stopped step is no measure
  // Each stage's workers (with their analysis), then each stage on a thread:
  // only the stages being measured hold their jobs' durations at once.
  std::map<int, std::vector<std::pair<const Worker*, const WorkerAnalysis*>>> by_stage;
  size_t w = 0;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) {
      const WorkerAnalysis& analysed = workers[w++];
      if (worker.role.known()) by_stage[worker.role.stage].push_back({&worker, &analysed});
    }
  std::vector<const std::vector<std::pair<const Worker*, const WorkerAnalysis*>>*> stage_workers;
  std::vector<StageAnalysis> out;
  for (const auto& [s, members] : by_stage) {
    stage_workers.push_back(&members);
    out.emplace_back().stage = s;
  }
  ParallelFor(out.size(), threads, [&](size_t i) {
    StageAnalysis& stage = out[i];
    PassesByType passes;
    std::vector<Nanos> forward, backward;
    for (const auto& [worker, analysed] : *stage_workers[i]) {
      ++stage.workers;
      stage.busy = SaturatingAdd(stage.busy, analysed->busy);
      stage.idle = SaturatingAdd(stage.idle, analysed->idle);
      for (const Job& job : worker->jobs) {
        if (unfinished.Contains(job.step)) continue;
        const Pass pass = passes.Of(job.type);
        if (pass == Pass::kForward) forward.push_back(job.end - job.start);
        else if (pass == Pass::kBackward || pass == Pass::kBackwardInput) backward.push_back(job.end - job.start);
      }
    }
    stage.forward = Stats(std::move(forward));
    stage.backward = Stats(std::move(backward));
    const Nanos window = SaturatingAdd(stage.busy, stage.idle);
    stage.bubble_ratio = window > 0 ? static_cast<double>(stage.idle) / static_cast<double>(window) : 0;
  });
  return out;
}

std::vector<LaggingPeer> FindLaggingPeers(const Timeline& timeline, int threads) {
  const UnfinishedStepSet unfinished(timeline);  // a stopped step is no measure
  // The peers of each (replica, stage), and each peer's jobs by (type,
  // micro-batch, occurrence) in its start order.
  using JobKey = std::tuple<std::uint32_t, std::int64_t, std::int64_t, int>;  // type, micro-batch, step, occurrence
  struct Peer {
    const Worker* worker;
    std::vector<std::pair<JobKey, const Job*>> jobs;  // sorted by key
    const Job* Find(const JobKey& key) const {
      const auto it = std::lower_bound(jobs.begin(), jobs.end(), key,
                                       [](const auto& entry, const JobKey& k) { return entry.first < k; });
      return it != jobs.end() && it->first == key ? it->second : nullptr;
    }
  };
  // The workers of each (replica, stage); their keyed jobs are built one
  // group at a time on each thread, so only that many groups' are in memory.
  std::map<std::pair<int, int>, std::vector<const Worker*>> by_place;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers)
      if (worker.role.known()) by_place[{worker.role.replica, worker.role.stage}].push_back(&worker);
  std::vector<const std::vector<const Worker*>*> groups;
  for (const auto& [place, workers] : by_place) groups.push_back(&workers);
  const auto keyed = [&](const Worker& worker, PassesByType& passes) {
    Peer peer{&worker, {}};
    peer.jobs.reserve(worker.jobs.size());
    for (const Job& job : worker.jobs)  // in start order: the occurrence counts below follow it
      if (IsComputePass(passes.Of(job.type)) && !unfinished.Contains(job.step))
        peer.jobs.emplace_back(JobKey{job.type.index(), job.micro_batch, job.step, 0}, &job);
    std::stable_sort(peer.jobs.begin(), peer.jobs.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (size_t i = 1; i < peer.jobs.size(); ++i) {
      JobKey& key = peer.jobs[i].first;
      const JobKey& before = peer.jobs[i - 1].first;
      if (std::get<0>(key) == std::get<0>(before) && std::get<1>(key) == std::get<1>(before) &&
          std::get<2>(key) == std::get<2>(before))
        std::get<3>(key) = std::get<3>(before) + 1;
    }
    return peer;
  };
  // Each group alone (16,384 of them at 131,072 GPUs), then taken in order.
  std::vector<std::optional<LaggingPeer>> found(groups.size());
  ParallelFor(groups.size(), threads, [&](size_t g) {
    const std::vector<const Worker*>& workers = *groups[g];
    if (workers.size() < 2) return;
    PassesByType passes;
    // Each peer's compute jobs in start order. Peers in lockstep (the same
    // jobs in the same order, as tensor-parallel peers nearly always run
    // them) match by position: no keys to sort and look up (131,072 workers'
    // sorts were most of this).
    std::vector<std::vector<const Job*>> in_order(workers.size());
    for (size_t p = 0; p < workers.size(); ++p) {
      in_order[p].reserve(workers[p]->jobs.size());  // once, not grown: 16,384 groups at 131,072 GPUs
      for (const Job& job : workers[p]->jobs)
        if (IsComputePass(passes.Of(job.type)) && !unfinished.Contains(job.step)) in_order[p].push_back(&job);
    }
    bool lockstep = true;
    for (size_t p = 1; p < workers.size() && lockstep; ++p) {
      lockstep = in_order[p].size() == in_order[0].size();
      for (size_t k = 0; k < in_order[0].size() && lockstep; ++k) {
        const Job &a = *in_order[0][k], &b = *in_order[p][k];
        lockstep = a.type == b.type && a.micro_batch == b.micro_batch && a.step == b.step;
      }
    }
    std::vector<std::vector<Nanos>> lags(workers.size());
    for (std::vector<Nanos>& lag : lags) lag.reserve(in_order[0].size());
    std::vector<Nanos> durations;
    durations.reserve(in_order[0].size());
    std::vector<const Job*> same;
    same.reserve(workers.size());
    const auto add = [&] {  // one job every peer ran: how far each started after the first
      Nanos earliest = same[0]->start;
      for (const Job* job : same) earliest = std::min(earliest, job->start);
      for (size_t p = 0; p < same.size(); ++p) lags[p].push_back(same[p]->start - earliest);
      durations.push_back(same[0]->end - same[0]->start);
    };
    if (lockstep) {
      for (size_t k = 0; k < in_order[0].size(); ++k) {
        same.clear();
        for (const std::vector<const Job*>& jobs : in_order) same.push_back(jobs[k]);
        add();
      }
    } else {
      std::vector<Peer> peers;
      for (const Worker* worker : workers) peers.push_back(keyed(*worker, passes));
      for (const auto& [job_key, job] : peers[0].jobs) {
        same.clear();
        for (const Peer& peer : peers) {
          const Job* match = peer.Find(job_key);
          if (!match) break;
          same.push_back(match);
        }
        if (same.size() == peers.size()) add();  // else a job not every peer ran
      }
    }
    if (durations.empty()) return;
    const Nanos threshold = std::max<Nanos>(kPeerLagFloor, PercentileOf(durations, 50) / 20);
    // The peer furthest behind, when it is behind by more than the noise.
    size_t worst = 0;
    std::vector<Nanos> medians(workers.size());
    for (size_t p = 0; p < workers.size(); ++p) {
      medians[p] = PercentileOf(lags[p], 50);
      if (medians[p] > medians[worst]) worst = p;
    }
    if (medians[worst] <= threshold) return;
    const Worker& worker = *workers[worst];
    found[g] = LaggingPeer{worker.machine, worker.index, WorkerName(timeline, worker), worker.role, medians[worst],
                           lags[worst].size()};
  });
  std::vector<LaggingPeer> lagging;
  for (std::optional<LaggingPeer>& peer : found)
    if (peer) lagging.push_back(std::move(*peer));
  std::sort(lagging.begin(), lagging.end(), [](const LaggingPeer& a, const LaggingPeer& b) { return a.behind > b.behind; });
  return lagging;
}

std::vector<LastReplica> FindLastReplicas(const Timeline& timeline, const std::vector<StepWindow>& steps, int threads) {
  const UnfinishedStepSet unfinished(timeline);  // a stopped step is no measure
  // Each worker's last compute job end per step on the threads (its jobs
  // are by start: a step's come together, so the last entry is tried first),
  // then the workers' taken together per replica.
  const std::vector<const Worker*> workers = AllWorkers(timeline);
  std::vector<std::vector<std::pair<std::int64_t, Nanos>>> ends(workers.size());
  ParallelFor(workers.size(), threads, [&](size_t w) {
    const Worker& worker = *workers[w];
    if (!worker.role.known()) return;
    PassesByType passes;
    auto& mine = ends[w];
    for (const Job& job : worker.jobs) {
      if (job.step == kNoStep || !IsComputePass(passes.Of(job.type)) || unfinished.Contains(job.step)) continue;
      auto it = !mine.empty() && mine.back().first == job.step
                    ? mine.end() - 1
                    : std::find_if(mine.begin(), mine.end(), [&](const auto& e) { return e.first == job.step; });
      if (it == mine.end()) mine.emplace_back(job.step, job.end);
      else it->second = std::max(it->second, job.end);
    }
  });
  std::map<std::int64_t, std::map<int, Nanos>> last;  // step -> replica -> last compute job end
  int replicas = 0;
  for (size_t w = 0; w < workers.size(); ++w) {
    if (!workers[w]->role.known()) continue;
    const int replica = workers[w]->role.replica;
    replicas = std::max(replicas, replica + 1);
    for (const auto& [step, end] : ends[w]) {
      auto [it, inserted] = last[step].try_emplace(replica, end);
      it->second = std::max(it->second, end);
    }
  }
  std::vector<LastReplica> out;
  if (replicas < 2) return out;
  for (const StepWindow& window : steps) {
    const auto it = last.find(window.step);
    if (it == last.end() || it->second.size() < 2) continue;
    std::vector<Nanos> ends;
    int latest = it->second.begin()->first;
    for (const auto& [replica, end] : it->second) {
      ends.push_back(end);
      if (end > it->second.at(latest)) latest = replica;
    }
    out.push_back({window.step, latest, it->second.at(latest) - PercentileOf(ends, 50)});
  }
  return out;
}

}  // namespace jobviz
