// jobviz-gen-ledger: a run history of many runs for the ledger's benchmark
// (issue 57: 10,000 runs of 2,048 workers, 20 M worker rows; tools/bench-ledger).
// Each run is a RunRecord as --record stores it: pp16 x mp8 x dp16 (by
// default) on hosts of 8 GPUs, a nightly start, step time and bubble with
// noise; one host in 40 is slow in a run (its GPUs' cost and score set as
// the analysis shares the no-slow-workers gain), one run in 50 stopped with
// a first to stop. Stored through the same StoreRun as --record, a run a
// transaction.
//   jobviz-gen-ledger --out LEDGER [--runs 10000 --workers 2048 --per_host 8 --pp 16 --names 4]
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>

#include "history/ledger_store.h"
#include "pipeline_common.h"

namespace {

struct Config {
  std::string out;
  int runs = 10'000, workers = 2'048, per_host = 8, pp = 16, mp = 8, names = 4;
  std::uint64_t seed = 1;
};

jobviz::RunRecord MakeRun(const Config& c, int n, pipeline::Random& random) {
  jobviz::RunRecord r;
  r.identity = "gen-" + std::to_string(c.seed) + "-" + std::to_string(n);
  r.started_at = 1'790'000'000 + static_cast<std::int64_t>(n) * 86'400 / c.names;
  r.recorded_at = r.started_at + 3'600;
  r.name = "job-" + std::to_string(n % c.names);
  r.command = "jobviz merge";
  r.tags = {{"commit", std::to_string(1000 + n / 30)}, {"cluster", n % 3 ? "east" : "west"}};
  r.pp = c.pp, r.mp = c.mp, r.dp = c.workers / (c.pp * c.mp);
  r.stages = c.pp, r.micro_batches = 32, r.schedule = "1F1B";
  r.machines = static_cast<size_t>(c.workers / c.per_host), r.workers = static_cast<size_t>(c.workers);
  r.jobs = r.workers * 4 * 65;
  r.steps = 4;
  r.step_us = 80'000 * (1 + 0.03 * random.Uniform());
  r.bubble = 0.2 + 0.05 * random.Uniform();
  r.ideal_bubble = 0.19;
  for (int s = 0; s < 4; ++s) r.step_rows.push_back({s, {r.step_us * (1 + 0.01 * random.Uniform()), r.bubble}});
  const int hosts = c.workers / c.per_host;
  const int slow_host = random.Uniform() < 0.5 ? static_cast<int>(random.Uniform() * (hosts / 40 + 1)) * 40 % hosts : -1;
  const bool stopped = n % 50 == 49;
  r.what_ifs = {{"no_slow_workers", slow_host >= 0, slow_host >= 0 ? 0.1 : 0, slow_host >= 0 ? 8'000.0 : 0.0},
                {"free_hand_offs", true, 0.02, 1'600}, {"no_stall", true, 0.01, 800}};
  r.top_what_if = slow_host >= 0 ? "no_slow_workers" : "free_hand_offs";
  r.top_gain = slow_host >= 0 ? 0.1 : 0.02;
  r.top_cause = r.top_what_if + " would save time";
  if (stopped) {
    r.stop_kind = "stopped", r.stop_sentence = "machine7 worker 3 stopped first", r.stop_step = 3;
    r.stop_host = "host" + std::to_string(7 + n % 11), r.stop_gpu = 3, r.stop_rank = 7 * c.per_host + 3;
  }
  r.worker_rows.reserve(r.workers);
  for (int w = 0; w < c.workers; ++w) {
    jobviz::RecordedWorker row;
    const int host = w / c.per_host;
    row.host = "host" + std::to_string(host);
    row.machine_dir = "machine" + std::to_string(host);
    row.gpu = w % c.per_host;
    row.rank = w;
    row.stage = w / c.mp % c.pp;
    row.mp = w % c.mp;
    row.replica = w / (c.pp * c.mp);
    row.busy_us = r.step_us * 4 * (1 - r.bubble);
    row.idle_us = r.step_us * 4 * r.bubble;
    row.speed = 1 + 0.01 * random.Uniform();
    if (host == slow_host) {
      row.slow_factor = 1.3;
      row.cost_us = 8'000.0 / c.per_host;
      row.score = row.cost_us / r.step_us;
    }
    row.first_stop = stopped && row.host == r.stop_host && row.gpu == 3;
    r.worker_rows.push_back(std::move(row));
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  CLI::App app{"Writes a run history of many runs (the ledger's benchmark)"};
  app.add_option("--out", c.out, "The ledger to write (appended to when it exists)")->required();
  app.add_option("--runs", c.runs, "Runs")->check(CLI::Range(1, 10'000'000));
  app.add_option("--workers", c.workers, "Workers a run")->check(CLI::Range(8, 1 << 20));
  app.add_option("--per_host", c.per_host, "GPUs a host")->check(CLI::Range(1, 64));
  app.add_option("--names", c.names, "Jobs (run names) taking turns")->check(CLI::Range(1, 1000));
  app.add_option("--seed", c.seed, "Random seed (and the runs' identities)");
  CLI11_PARSE(app, argc, argv);
  jobviz::LedgerError error;
  auto db = jobviz::LedgerDb::Open(c.out, /*for_writing=*/true, &error);
  if (!db) {
    std::fprintf(stderr, "jobviz-gen-ledger: %s\n", error.message.c_str());
    return 1;
  }
  pipeline::Random random(c.seed, 0);
  const auto start = std::chrono::steady_clock::now();
  for (int n = 0; n < c.runs; ++n)
    if (!jobviz::StoreRun(*db, MakeRun(c, n, random), &error)) {
      std::fprintf(stderr, "jobviz-gen-ledger: run %d: %s\n", n, error.message.c_str());
      return 1;
    }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("jobviz-gen-ledger: %d runs of %d workers into %s in %.1f s (%.1f ms a run)\n", c.runs, c.workers,
              c.out.c_str(), seconds, 1000 * seconds / c.runs);
  return 0;
}
