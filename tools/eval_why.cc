// How well the bottleneck analysis (analyse/bottleneck.h) finds what is
// wrong with a run: randomized runs of the run simulator
// (analyse/run_simulator.h), plain and hybrid, 8 to 256 workers, with
// jitter, occasional 3x outlier jobs, drift over steps, with and without a
// global all-reduce before the optimizers, and none, one or several slow
// workers, a slow stage, a slow link or a slow replica injected. Reports
// precision and recall of "slow worker" and "slow stage", false slow
// workers on runs without one, and each what-if's error against the same
// run without its cause (the counterfactual): the table in docs/analysis.md
// ("How well the why is measured").
//   jobviz-eval-why [RUNS] [FIRST_SEED] [-v]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analyse/analysis.h"
#include "analyse/run_simulator.h"

using namespace jobviz;
using sim::kUs;
using sim::SimRun;

namespace {

enum class Injected { kNone, kWorker, kWorkers, kStage, kLink, kReplica };
const char* InjectedName(Injected k) {
  switch (k) {
    case Injected::kNone: return "clean";
    case Injected::kWorker: return "one slow worker";
    case Injected::kWorkers: return "several slow workers";
    case Injected::kStage: return "slow stage";
    case Injected::kLink: return "slow link";
    case Injected::kReplica: return "slow replica";
  }
  return "";
}

struct Case {
  SimRun run;
  Injected injected = Injected::kNone;
  std::uint64_t seed = 0;
};

// A random run and what is wrong with it.
Case RandomCase(std::uint64_t seed) {
  sim::Random random{seed * 0x9E3779B97F4A7C15ULL + 11};
  for (int i = 0; i < 4; ++i) random.Next();
  Case c;
  c.seed = seed;
  SimRun& run = c.run;
  if (random.Next() < 0.3) {  // plain: one pipeline, every worker its own stage
    const int pp[] = {8, 16, 32};
    run.pp = pp[random.Below(3)];
    run.mp = run.dp = 1;
    run.topology = false;
  } else {
    for (;;) {
      const int pp[] = {2, 4, 8}, mp[] = {1, 2, 4}, dp[] = {1, 2, 4, 8};
      run.pp = pp[random.Below(3)];
      run.mp = mp[random.Below(3)];
      run.dp = dp[random.Below(4)];
      const int workers = run.pp * run.mp * run.dp;
      if (workers >= 8 && workers <= 256) break;
    }
  }
  const int micro_batches[] = {8, 16};
  run.micro_batches = std::max(micro_batches[random.Below(2)], run.pp);
  run.steps = 4 + random.Below(3);
  run.jitter = 0.02 + 0.03 * random.Next();
  if (random.Next() < 0.3) run.outlier_share = 0.01;
  if (random.Next() < 0.3) run.drift = 0.005;
  run.barrier = random.Next() < 0.5;
  run.latency = static_cast<Nanos>((20 + 380 * random.Next()) * kUs);
  run.reduce_latency = static_cast<Nanos>(200 * random.Next() * kUs);
  run.step_gap = static_cast<Nanos>((50 + 3000 * random.Next()) * kUs);
  const double kind = random.Next();
  c.injected = kind < 0.25 ? Injected::kNone : kind < 0.45 ? Injected::kWorker : kind < 0.6 ? Injected::kWorkers
             : kind < 0.75 ? Injected::kStage : kind < 0.85 ? Injected::kLink : Injected::kReplica;
  const auto factor = [&] { return 1.05 + 0.35 * random.Next(); };
  const auto any_worker = [&] { return std::tuple{random.Below(run.dp), random.Below(run.pp), random.Below(run.mp)}; };
  switch (c.injected) {
    case Injected::kNone: break;
    case Injected::kWorker: run.worker_factor[any_worker()] = factor(); break;
    case Injected::kWorkers:
      for (int k = 2 + random.Below(3); k-- > 0;) run.worker_factor[any_worker()] = factor();
      break;
    case Injected::kStage: run.stage_factor[random.Below(run.pp)] = factor(); break;
    case Injected::kLink: {
      const int from = random.Below(run.pp - 1);
      const Nanos extra = static_cast<Nanos>((200 + 800 * random.Next()) * kUs);
      run.link_extra[{from, from + 1}] = run.link_extra[{from + 1, from}] = extra;
      break;
    }
    case Injected::kReplica: {
      const int replica = random.Below(run.dp), stage = random.Below(run.pp);
      const double f = factor();
      for (int peer = 0; peer < run.mp; ++peer) run.worker_factor[{replica, stage, peer}] = f;
      break;
    }
  }
  return c;
}

int RankOf(const SimRun& run, int replica, int stage, int peer) { return (replica * run.pp + stage) * run.mp + peer; }

// The truth: which ranks are slower than their peers and replicas, which
// stages slower than the others. A stage all of whose workers are slow is a
// slow stage (by its least slow worker's factor), and each of its workers
// slow only by what it adds to that. Without peers or replicas there is
// nothing a worker could be compared with: a slow worker is a slow stage.
struct Truth {
  std::map<int, double> workers;  // rank -> factor
  std::map<int, double> stages;   // stage -> factor
};
Truth TruthOf(const SimRun& run) {
  Truth t;
  for (const auto& [stage, f] : run.stage_factor) t.stages[stage] = f;
  std::map<int, std::vector<double>> by_stage;
  for (const auto& [key, f] : run.worker_factor) by_stage[std::get<1>(key)].push_back(f);
  for (const auto& [key, f] : run.worker_factor) {
    const auto [replica, stage, peer] = key;
    const std::vector<double>& factors = by_stage[stage];
    double own = f;
    if (static_cast<int>(factors.size()) == run.mp * run.dp) {
      const double least = *std::min_element(factors.begin(), factors.end());
      t.stages[stage] = least;
      own = f / least;
    }
    if (own > 1.0) t.workers[RankOf(run, replica, stage, peer)] = own;
  }
  return t;
}

struct Score {
  size_t flagged = 0, flagged_right = 0;  // precision: flagged ones truly slower (by any amount)
  size_t due = 0, found = 0;              // recall: those at least 10% slower, found
  double precision() const { return flagged ? static_cast<double>(flagged_right) / static_cast<double>(flagged) : 1; }
  double recall() const { return due ? static_cast<double>(found) / static_cast<double>(due) : 1; }
};

void Count(const std::map<int, double>& truth, const std::set<int>& flagged, Score* score) {
  for (int k : flagged) {
    ++score->flagged;
    score->flagged_right += truth.count(k) > 0;
  }
  for (const auto& [k, f] : truth)
    if (f >= 1.10) {
      ++score->due;
      score->found += flagged.count(k) > 0;
    }
}

// The same run without the cause a what-if removes.
SimRun Counterfactual(const SimRun& run, WhatIfKind kind) {
  SimRun c = run;
  switch (kind) {
    case WhatIfKind::kBalancedStages: c.stage_factor.clear(); break;
    case WhatIfKind::kNoSlowWorkers: {  // each at its stage's speed (TruthOf): a wholly slow stage stays slow
      const Truth truth = TruthOf(run);
      for (auto& [key, f] : c.worker_factor) {
        const auto [replica, stage, peer] = key;
        const auto it = truth.workers.find(RankOf(run, replica, stage, peer));
        if (it != truth.workers.end()) f /= it->second;
      }
      break;
    }
    case WhatIfKind::kFreeHandOffs: c.latency = 0; c.link_extra.clear(); break;
    case WhatIfKind::kNoOutliers: c.outlier_share = 0; break;
    case WhatIfKind::kNoStepGaps: c.step_gap = 0; break;
    default: break;
  }
  return c;
}

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 200;
  const std::uint64_t first = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  const bool verbose = argc > 3 && std::strcmp(argv[3], "-v") == 0;
  Score workers, stages;
  size_t clean_runs = 0, false_on_clean = 0;
  std::map<std::string, std::vector<double>> errors;  // what-if -> |predicted - counterfactual| / counterfactual
  std::vector<double> all_errors;
  for (int i = 0; i < runs; ++i) {
    const Case c = RandomCase(first + static_cast<std::uint64_t>(i));
    const SimRun& run = c.run;
    const Analysis a = Analyze(sim::Simulate(run), 0);
    const Truth truth = TruthOf(run);
    std::set<int> flagged_workers, flagged_stages;
    for (const SlowWorker& w : a.slow_workers) flagged_workers.insert(w.machine * 4 + w.worker);
    for (const SlowStage& s : a.bottleneck.slow_stages) flagged_stages.insert(s.stage);
    Count(truth.workers, flagged_workers, &workers);
    Count(truth.stages, flagged_stages, &stages);
    if (truth.workers.empty()) {
      ++clean_runs;
      false_on_clean += flagged_workers.size();
    }
    const std::string layout = (run.topology ? "hybrid pp" + std::to_string(run.pp) + " mp" + std::to_string(run.mp) + " dp" +
                                                   std::to_string(run.dp)
                                             : "plain pp" + std::to_string(run.pp)) +
                               (run.barrier ? " barrier" : "");
    if (verbose) {
      std::string wrong;
      for (const auto& [rank, f] : truth.workers)
        if (f >= 1.10 && !flagged_workers.count(rank)) wrong += " missed worker " + std::to_string(rank) + " " + std::to_string(f);
      for (int rank : flagged_workers)
        if (!truth.workers.count(rank)) wrong += " false worker " + std::to_string(rank);
      for (const auto& [stage, f] : truth.stages)
        if (f >= 1.10 && !flagged_stages.count(stage)) wrong += " missed stage " + std::to_string(stage) + " " + std::to_string(f);
      for (int stage : flagged_stages)
        if (!truth.stages.count(stage)) wrong += " false stage " + std::to_string(stage);
      for (const auto& [key, f] : run.worker_factor)
        if (!wrong.empty()) wrong += " [injected r" + std::to_string(std::get<0>(key)) + " s" + std::to_string(std::get<1>(key)) + " p" + std::to_string(std::get<2>(key)) + " x" + std::to_string(f).substr(0, 5) + "]";
      for (const auto& [stage, f] : run.stage_factor)
        if (!wrong.empty()) wrong += " [injected stage " + std::to_string(stage) + " x" + std::to_string(f).substr(0, 5) + "]";
      if (!wrong.empty()) std::printf("seed %llu: %s, %s:%s\n", static_cast<unsigned long long>(c.seed), layout.c_str(), InjectedName(c.injected), wrong.c_str());
    }
    // Each what-if whose cause is in the run, against the run without it.
    std::vector<WhatIfKind> kinds = {WhatIfKind::kFreeHandOffs, WhatIfKind::kNoStepGaps};
    if (!run.stage_factor.empty()) kinds.push_back(WhatIfKind::kBalancedStages);
    if (!run.worker_factor.empty() && !a.slow_workers.empty()) kinds.push_back(WhatIfKind::kNoSlowWorkers);
    if (run.outlier_share > 0) kinds.push_back(WhatIfKind::kNoOutliers);
    for (WhatIfKind kind : kinds) {
      const Analysis counter = Analyze(sim::Simulate(Counterfactual(run, kind)), 0);
      const double actual = MeasuredWallPerStep(counter.bottleneck), predicted = PredictedWallPerStep(a.bottleneck, kind);
      const double error = std::abs(predicted - actual) / actual;
      errors[WhatIfKey(kind)].push_back(error);
      if (kind != WhatIfKind::kNoStepGaps) all_errors.push_back(error);  // exact by construction: not in the total
      if (verbose && error > 0.03)
        std::printf("seed %llu: %s, %s: %s predicts %.3f ms per step, the run without it takes %.3f ms (%.1f%% off)\n",
                    static_cast<unsigned long long>(c.seed), layout.c_str(), InjectedName(c.injected), WhatIfKey(kind),
                    predicted / 1e6, actual / 1e6, 100 * error);
    }
  }
  std::printf("| detection | flagged | right | precision | due (>= 10%% slower) | found | recall |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const auto& [name, s] : {std::pair{"slow worker", workers}, std::pair{"slow stage", stages}})
    std::printf("| %s | %zu | %zu | %.3f | %zu | %zu | %.3f |\n", name, s.flagged, s.flagged_right, s.precision(), s.due,
                s.found, s.recall());
  std::printf("\nfalse slow workers on %zu runs without one: %zu\n\n", clean_runs, false_on_clean);
  std::printf("| what-if | runs | median error | p90 error | worst |\n| --- | ---: | ---: | ---: | ---: |\n");
  for (const auto& [name, e] : errors)
    std::printf("| %s | %zu | %.2f%% | %.2f%% | %.2f%% |\n", name.c_str(), e.size(), 100 * Quantile(e, 0.5), 100 * Quantile(e, 0.9),
                100 * Quantile(e, 1));
  std::printf("| **all but no_step_gaps** | %zu | %.2f%% | %.2f%% | %.2f%% |\n", all_errors.size(), 100 * Quantile(all_errors, 0.5),
              100 * Quantile(all_errors, 0.9), 100 * Quantile(all_errors, 1));
  const bool met = workers.precision() >= 0.95 && workers.recall() >= 0.95 && stages.precision() >= 0.95 &&
                   stages.recall() >= 0.95 && false_on_clean == 0 && Quantile(all_errors, 0.5) <= 0.01 &&
                   Quantile(all_errors, 0.9) <= 0.03;
  std::printf("\ngoals (precision and recall >= 0.95, no false slow worker, median <= 1%%, p90 <= 3%%): %s\n", met ? "met" : "missed");
  return met ? 0 : 1;
}
