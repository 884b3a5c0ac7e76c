// The bottleneck analysis alone (AnalyzeBottleneck and FindCriticalPaths),
// on simulated runs of the scale benchmark's size (1.33 M jobs, 10 steps),
// best of a few repetitions: a hybrid pp4 x mp2 x dp256 run with a slow
// stage, and one pipeline of 2,048 stages (what tools/bench-scale's logs
// are). docs/benchmarks.md quotes it.
//   jobviz-bench-bottleneck [REPETITIONS] [THREADS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "analyse/analysis.h"
#include "analyse/bottleneck.h"
#include "analyse/run_simulator.h"

using namespace jobviz;

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

void Measure(const char* name, const sim::SimRun& run, int repetitions, int threads) {
  const Timeline t = sim::Simulate(run);
  size_t jobs = 0;
  for (const Machine& machine : t.machines)
    for (const Worker& worker : machine.workers) jobs += worker.jobs.size();
  const std::vector<StepWindow> steps = StepWindowsOf(t, threads);
  double full = 1e9, paths = 1e9;
  double replay_error = 0;
  for (int r = 0; r < repetitions; ++r) {
    auto start = std::chrono::steady_clock::now();
    std::vector<SlowWorker> slow;
    const Bottleneck b = AnalyzeBottleneck(t, steps, threads, &slow);
    full = std::min(full, Seconds(start));
    replay_error = b.replay_error;
    start = std::chrono::steady_clock::now();
    const Bottleneck p = FindCriticalPaths(t, steps, threads);
    paths = std::min(paths, Seconds(start));
  }
  const double per_job = 1e6 / static_cast<double>(jobs);
  std::printf("%s: %zu jobs, %zu steps; whole analysis %.3f s (%.3f us/job, replay within %.2f%%), critical paths %.3f s (%.3f us/job)\n",
              name, jobs, steps.size(), full, full * per_job, replay_error * 100, paths, paths * per_job);
}

}  // namespace

int main(int argc, char** argv) {
  const int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 0;
  sim::SimRun hybrid;
  hybrid.pp = 4;
  hybrid.mp = 2;
  hybrid.dp = 256;
  hybrid.micro_batches = 32;
  hybrid.steps = 10;
  hybrid.stage_factor[2] = 1.2;
  Measure("pp4 x mp2 x dp256", hybrid, repetitions, threads);
  sim::SimRun flat = hybrid;
  flat.pp = 2048;
  flat.mp = flat.dp = 1;
  flat.topology = false;
  flat.stage_factor.clear();
  Measure("2048 stages", flat, repetitions, threads);
  return 0;
}
