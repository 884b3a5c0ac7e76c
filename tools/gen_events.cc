// jobviz-gen-events: writes what `jobviz extract` would write on every node
// of a hybrid-parallel run too large to keep as logs on one disk (issue 56:
// pp16 x mp8 x dp1024, 131,072 GPUs, 16,384 nodes of 8).
//
// Ranks are placed as Paddle places them (rank = ((replica * pp) + stage) *
// mp + peer, dp outermost), --per_machine ranks a node. Each replica runs
// its own 1F1B passes (pipeline::TimeStep, durations within +-2%), a
// stage's optimizer after the all-reduce of its gradients over every
// replica; a stage's tensor-parallel peers run in step with it. Each rank's log is made in
// memory as the framework prints it (glog prefix, HybridParallelInfo, the
// profiler window line, each step's job lines after the step), read with
// jobviz's own scan, and only the node's events file is written:
// OUT/machineN.jsonl.gz, named "machineN". --logs_of N,M also writes those
// nodes' logs to OUT/logs/machineN/workerlog.K, so that `jobviz extract
// --log_dir logs/machineN --machine machineN`, run in OUT, can be compared
// with the file written here (test/e2e/gen_events.py).
//   jobviz-gen-events --out DIR [--pp 16 --mp 8 --dp 1024 --per_machine 8 --steps 4 --microbatches 16]
//                     [--start_ms MS --slow_node N --slow_factor 1.3]
#include <CLI/CLI.hpp>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "parse/event_file.h"
#include "parse/line_parser.h"
#include "read/parallel_for.h"
#include "pipeline_common.h"

namespace {

namespace fs = std::filesystem;

struct Config {
  std::string out;
  int pp = 16, mp = 8, dp = 1024, per_machine = 8, steps = 4, microbatches = 16, threads = 0;
  std::int64_t start_ms = 1697793307000;
  std::uint64_t seed = 1;
  int slow_node = -1;        // a node whose GPUs run their jobs slow_factor times longer (docs/history.md's example)
  double slow_factor = 1.3;
  std::set<int> logs_of;  // nodes whose logs are written too
};

// Per replica, per step, per stage: its ops timed. Each replica runs its
// own 1F1B passes; a stage's optimizer waits for that stage's last backward
// in every replica (the gradient all-reduce, 50 us after it), and the next
// step starts 500 us after the last optimizer.
using Steps = std::vector<std::vector<std::vector<pipeline::TimedOp>>>;

// Whether (replica, stage)'s ranks are on --slow_node (rank = ((replica * pp) + stage) * mp + peer).
bool OnSlowNode(const Config& c, int replica, int stage) {
  if (c.slow_node < 0) return false;
  const long long first = (static_cast<long long>(replica) * c.pp + stage) * c.mp;
  return first / c.per_machine <= c.slow_node && (first + c.mp - 1) / c.per_machine >= c.slow_node;
}

std::vector<Steps> TimeRun(const Config& c) {
  const pipeline::StepTimes times{1000, 2000, 300, 20};
  std::vector<pipeline::Random> random;  // each replica's durations from a stream of their own
  for (int r = 0; r < c.dp; ++r) random.emplace_back(c.seed, static_cast<std::uint64_t>(r));
  std::vector<Steps> replicas(static_cast<size_t>(c.dp));
  double start = static_cast<double>(c.start_ms) * 1000.0 + 200;
  for (int step = 0; step < c.steps; ++step) {
    std::vector<double> reduced(static_cast<size_t>(c.pp), 0);  // per stage: its last backward anywhere
    for (int r = 0; r < c.dp; ++r) {
      pipeline::Random& rng = random[static_cast<size_t>(r)];
      replicas[r].push_back(pipeline::TimeStep(c.pp, c.microbatches, times, start, [&](double base, int stage) {
        const double slow = OnSlowNode(c, r, stage) ? c.slow_factor : 1.0;
        return base * slow * (1 + 0.02 * (2 * rng.Uniform() - 1));
      }));
      for (int s = 0; s < c.pp; ++s) {
        const auto& ops = replicas[r].back()[s];
        reduced[s] = std::max(reduced[s], ops[ops.size() - 2].end_us);
      }
    }
    double end = start;
    for (Steps& steps : replicas)
      for (int s = 0; s < c.pp; ++s) {
        pipeline::TimedOp& optimizer = steps.back()[s].back();
        const double length = optimizer.end_us - optimizer.start_us;
        optimizer.start_us = reduced[s] + 50;
        optimizer.end_us = optimizer.start_us + length;
        end = std::max(end, optimizer.end_us);
      }
    start = end + 500;
  }
  return replicas;
}

// The log of `rank` (stage, replica, peer) as the framework prints it.
std::string RankLog(const Config& c, const Steps& steps, int rank,
                    int stage, int replica, int peer) {
  std::string log;
  const int thread = 22317 + rank % 9973;
  const double begin = static_cast<double>(c.start_ms) * 1000.0;
  pipeline::AppendGlogPrefix(log, begin, thread, "topology.py:210");
  log += "HybridParallelInfo: rank_id: " + std::to_string(rank) + ", pp_rank: " + std::to_string(stage) +
         ", dp_rank: " + std::to_string(replica) + ", tp_rank: " + std::to_string(peer) + "\n";
  pipeline::AppendGlogPrefix(log, begin, thread, "pipeline_scheduler.py:88");
  log += "Schedule Profiler start at step 0 and end at step " + std::to_string(c.steps + 1) + "\n";
  for (const auto& step : steps) {
    const std::vector<pipeline::TimedOp>& ops = step[static_cast<size_t>(stage)];
    for (size_t j = 0; j < ops.size(); ++j) {
      pipeline::AppendGlogPrefix(log, ops.back().end_us + 30, thread, "standalone_executor.cc:217");
      log += "Profiler Info: Job (" + std::to_string(j) + "), type = " + pipeline::KindName(ops[j].kind) +
             ", micro_batch_id = " + std::to_string(ops[j].micro_batch) + ", job_start_time = " + pipeline::Millis(ops[j].start_us) +
             ", job_end_time = " + pipeline::Millis(ops[j].end_us) + "\n";
    }
  }
  return log;
}

// One node: its ranks' logs scanned, its events file written (and its logs, when asked).
bool WriteNode(const Config& c, const Steps& steps, int node,
               const jobviz::LineParser& parser, std::string* error) {
  const std::string machine = "machine" + std::to_string(node);
  const bool keep_logs = c.logs_of.count(node) > 0;
  const fs::path logs_dir = fs::path(c.out) / "logs" / machine;
  if (keep_logs) fs::create_directories(logs_dir);
  jobviz::MachineEvents events{machine, {}, {}};
  for (int local = 0; local < c.per_machine; ++local) {
    const int rank = node * c.per_machine + local;
    const int peer = rank % c.mp, stage = rank / c.mp % c.pp, replica = rank / c.mp / c.pp;
    std::string log = RankLog(c, steps, rank, stage, replica, peer);
    // The path extract records when run in OUT with --log_dir logs/machineN.
    const std::string path = (fs::path("logs") / machine / ("workerlog." + std::to_string(local))).string();
    if (keep_logs) std::ofstream(logs_dir / ("workerlog." + std::to_string(local)), std::ios::binary) << log;
    events.files.push_back({0, local, path});
    events.scans.push_back(jobviz::ScanWorkerLogText(path, std::move(log), parser));
  }
  return jobviz::WriteEventFile((fs::path(c.out) / (machine + ".jsonl.gz")).string(), events, error);
}

int Generate(const Config& c) {
  if (c.mp % c.per_machine != 0 && c.per_machine % c.mp != 0) {
    std::fprintf(stderr, "jobviz-gen-events: --per_machine must divide --mp or be a multiple of it\n");
    return 2;
  }
  const long long ranks = static_cast<long long>(c.pp) * c.mp * c.dp;
  if (ranks % c.per_machine != 0) {
    std::fprintf(stderr, "jobviz-gen-events: %lld ranks do not fill nodes of %d\n", ranks, c.per_machine);
    return 2;
  }
  fs::create_directories(c.out);
  const int nodes = static_cast<int>(ranks / c.per_machine);
  const int nodes_per_replica = c.pp * c.mp / c.per_machine;  // a replica's ranks are contiguous
  const jobviz::LineParser parser;
  std::atomic<bool> failed = false;
  const std::vector<Steps> replicas = TimeRun(c);
  // Replica by replica, on every core.
  jobviz::ParallelFor(static_cast<size_t>(c.dp), c.threads, [&](size_t replica) {
    for (int k = 0; k < nodes_per_replica && !failed; ++k) {
      std::string error;
      if (!WriteNode(c, replicas[replica], static_cast<int>(replica) * nodes_per_replica + k, parser, &error)) {
        std::fprintf(stderr, "jobviz-gen-events: %s\n", error.c_str());
        failed = true;
      }
    }
  });
  if (failed) return 1;
  const long long jobs = ranks * c.steps * (2LL * c.microbatches + 1);
  std::printf("jobviz-gen-events: %d nodes, %lld ranks (pp%d x mp%d x dp%d), %lld jobs -> %s\n", nodes, ranks, c.pp,
              c.mp, c.dp, jobs, c.out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  CLI::App app{"Writes each node's `jobviz extract` output of a simulated hybrid-parallel run"};
  app.add_option("--out", c.out, "Directory for machineN.jsonl.gz (and logs/ with --logs_of)")->required();
  app.add_option("--pp", c.pp, "Pipeline stages")->check(CLI::Range(1, 4096));
  app.add_option("--mp", c.mp, "Tensor-parallel ranks a stage")->check(CLI::Range(1, 4096));
  app.add_option("--dp", c.dp, "Data-parallel replicas")->check(CLI::Range(1, 1 << 20));
  app.add_option("--per_machine", c.per_machine, "Ranks a node")->check(CLI::Range(1, 4096));
  app.add_option("--steps", c.steps, "Steps")->check(CLI::Range(1, 100000));
  app.add_option("--microbatches", c.microbatches, "Micro-batches a step")->check(CLI::Range(1, 100000));
  app.add_option("--seed", c.seed, "Random seed");
  app.add_option("--start_ms", c.start_ms, "Wall clock of the run's start, ms since the epoch");
  app.add_option("--slow_node", c.slow_node, "A node whose GPUs run their jobs --slow_factor times longer");
  app.add_option("--slow_factor", c.slow_factor, "How much longer (default 1.3)")->check(CLI::Range(1.0, 100.0));
  app.add_option("--logs_of", c.logs_of, "Nodes whose logs are written too, under OUT/logs/")->delimiter(',');
  app.add_option("-j,--threads", c.threads, "Threads (0: one per core)")->check(CLI::Range(0, 1024));
  CLI11_PARSE(app, argc, argv);
  return Generate(c);
}
