// A simulator of hybrid-parallel 1F1B training runs (pp x mp x dp), with
// causes of a slow step that can be injected one at a time: what the
// bottleneck analysis is tested against (its counterfactual is the same run
// without the cause) and what its benchmark analyses at scale.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>

#include "model/model.h"

namespace jobviz::sim {

constexpr Nanos kUs = 1000;

// A deterministic pseudo-random number in [0, 1), and an integer below n.
struct Random {
  std::uint64_t state;
  double Next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) / static_cast<double>(1ULL << 53);
  }
  int Below(int n) { return std::min(n - 1, static_cast<int>(Next() * n)); }
};

// What the simulated run looks like, and what is wrong with it.
struct SimRun {
  int pp = 4, mp = 2, dp = 2, micro_batches = 8, steps = 4;
  Nanos forward = 1000 * kUs, backward = 2000 * kUs, optimizer = 300 * kUs;
  Nanos latency = 20 * kUs;  // every hand-off
  Nanos step_gap = 100 * kUs;
  double jitter = 0.02;      // each job's duration within +-2%
  bool topology = true;      // false: no roles, every worker its own stage (pp x 1 x 1 only)
  int per_machine = 4;       // workers a machine (mp: one stage per machine)
  // Injected causes.
  std::map<int, double> stage_factor;                 // stage -> slower by
  std::map<std::pair<int, int>, Nanos> link_extra;    // (from stage, to stage) -> added latency
  std::map<std::tuple<int, int, int>, double> worker_factor;  // (replica, stage, peer) -> slower by
  double outlier_share = 0, outlier_factor = 3;  // drawn from a stream of their own: jitter stays as without
  double drift = 0;          // every job slower by this share per step (thermal, fragmentation)
  // Every optimizer waits for the last pass of every stage and replica (a
  // global all-reduce, as gradient-norm clipping makes it), not only for its
  // stage's replicas; `reduce_latency` after that last pass either way.
  bool barrier = false;
  Nanos reduce_latency = 0;
};

// The run: machines of `per_machine` workers; rank = ((replica * pp) + stage) * mp +
// peer (Paddle's order, dp outermost); each step 1F1B per replica, event
// by event, then each stage's optimizer after every replica's last backward
// (with `barrier`, after the last backward anywhere).
Timeline Simulate(const SimRun& run);

// The simulated run with Timeline::steps spanning each step's jobs (Simulate
// numbers each job's step, as the step finder would, and leaves the spans to it).
Timeline WithSteps(Timeline timeline);

}  // namespace jobviz::sim
