// jobviz-gen-logs: writes realistic worker logs of a pipeline-parallel run.
//
// A 1F1B schedule over P = machines x workers stages is simulated with
// transfer delays between stages; each worker's log gets what the framework
// prints: glog-prefixed noise lines, the profiler window line, optional NVTX
// step lines at step boundaries, and the step's job lines after the step, in
// job order. Used for sample_logs/, test fixtures and the benchmark
// (tools/bench), where --size_mb grows the logs to a given total size.
#include <CLI/CLI.hpp>

#include "pipeline_common.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Config {
  std::string out_dir;
  int machines = 1, workers = 4, steps = 4, microbatches = 8, first_step = 0;
  bool nvtx = false;
  int noise_per_job = 49;      // about 1 job line in 50
  int noise_max_chars = 300;
  double size_mb = 0;          // total size target; 0 = exactly --steps steps
  double forward_us = 900, backward_us = 1800, optimizer_us = 400, transfer_us = 60;
  double jitter = 0.05;        // relative random spread of job durations
  std::int64_t start_ms = 1697793307000;
  std::uint64_t seed = 1;
  // Clock error injected per machine (index -> value), and clock-sync rounds.
  std::map<int, double> skew_ms, drift_ppm;
  int sync_rounds = 0;        // rounds at the start and again at the end (0 = none)
  double sync_jitter_us = 3;  // uniform +- per reading
  bool sync_outlier = false;  // one round of machine 1 is 500 us off
};

using pipeline::Millis;
using pipeline::Random;
using pipeline::KindName;
using Op = pipeline::TimedOp;

// One step's ops, timed, each duration within +-jitter of its kind's.
std::vector<std::vector<Op>> SimulateStep(const Config& c, double step_start_us, Random& rng) {
  const pipeline::StepTimes times{c.forward_us, c.backward_us, c.optimizer_us, c.transfer_us};
  return pipeline::TimeStep(c.machines * c.workers, c.microbatches, times, step_start_us,
                            [&](double base) { return base * (1 + c.jitter * (2 * rng.Uniform() - 1)); });
}

class WorkerLog {
 public:
  WorkerLog(const std::string& path, int thread_id, std::uint64_t seed)
      : file_(std::fopen(path.c_str(), "wb")), tid_(thread_id), rng_(seed) {
    if (!file_) throw std::runtime_error("cannot write " + path);
  }
  ~WorkerLog() {
    Flush();
    std::fclose(file_);
  }
  std::uint64_t bytes() const { return bytes_ + buffer_.size(); }

  void Prefix(double epoch_us, const char* source) { pipeline::AppendGlogPrefix(buffer_, epoch_us, tid_, source); }
  void Line(const std::string& text) {
    buffer_ += text;
    buffer_ += '\n';
    if (buffer_.size() > (1 << 20)) Flush();
  }
  void Noise(double epoch_us, int count, int max_chars) {
    static const char* kWords[] = {"tensor", "allreduce", "shape=[8, 1024, 4096]", "dtype=bfloat16",
                                   "place=Place(gpu:0)", "op", "matmul_v2", "elementwise_add",
                                   "memory", "allocated", "cached", "stream", "event", "kernel",
                                   "launch", "grad", "param", "lr=0.0001", "loss", "scope"};
    static const char* kSources[] = {"interpretercore.cc:1021", "stream_analyzer.cc:88",
                                     "auto_growth_best_fit_allocator.cc:129", "gen_comm_id_helper.cc:311"};
    for (int i = 0; i < count; ++i) {
      Prefix(epoch_us, kSources[rng_.Below(4)]);
      const int target = 20 + rng_.Below(std::max(1, max_chars - 20));
      std::string text;
      while (static_cast<int>(text.size()) < target) {
        text += kWords[rng_.Below(20)];
        text += ' ';
      }
      Line(text);
    }
  }
  Random& rng() { return rng_; }

 private:
  void Flush() {
    std::fwrite(buffer_.data(), 1, buffer_.size(), file_);
    bytes_ += buffer_.size();
    buffer_.clear();
  }
  std::FILE* file_;
  int tid_;
  Random rng_;
  std::string buffer_;
  std::uint64_t bytes_ = 0;
};


// What machine m's wall clock reads at true time t (microseconds).
double Observed(const Config& c, int machine, double t_us) {
  const auto skew = c.skew_ms.find(machine);
  const auto drift = c.drift_ppm.find(machine);
  const double t0 = static_cast<double>(c.start_ms) * 1000.0;
  return t_us + (skew == c.skew_ms.end() ? 0.0 : skew->second * 1000.0) +
         (drift == c.drift_ppm.end() ? 0.0 : (t_us - t0) * drift->second * 1e-6);
}

// Rounds [first, first + count) of clock sync, all ranks observing the same
// true instants (spaced 100 us apart), each reading off by a little jitter.
void WriteSyncRounds(const Config& c, std::vector<std::unique_ptr<WorkerLog>>& logs, double t_us, int first,
                     Random& jitter) {
  for (int k = first; k < first + c.sync_rounds; ++k) {
    const double instant = t_us + 100.0 * (k - first);
    for (size_t rank = 0; rank < logs.size(); ++rank) {
      const int machine = static_cast<int>(rank) / c.workers;
      double reading = Observed(c, machine, instant) + c.sync_jitter_us * (2 * jitter.Uniform() - 1);
      if (c.sync_outlier && machine == 1 && k == first + 1) reading += 500;
      logs[rank]->Prefix(reading, "clock_sync.cc:52");
      logs[rank]->Line("Clock Sync: rank = " + std::to_string(rank) + ", round = " + std::to_string(k) +
                       ", time = " + Millis(reading));
    }
  }
}

int Generate(const Config& c) {
  namespace fs = std::filesystem;
  std::vector<std::unique_ptr<WorkerLog>> logs;
  for (int m = 0; m < c.machines; ++m) {
    fs::path dir = c.out_dir;
    if (c.machines > 1) dir /= "machine" + std::to_string(m);
    fs::create_directories(dir);
    for (int w = 0; w < c.workers; ++w)
      logs.push_back(std::make_unique<WorkerLog>((dir / ("workerlog." + std::to_string(w))).string(),
                                                 22317 + 97 * (m * c.workers + w),
                                                 c.seed * 1000 + m * c.workers + w));
  }
  Random schedule_rng(c.seed);
  double now_us = static_cast<double>(c.start_ms) * 1000.0;
  for (auto& log : logs) {
    log->Noise(now_us, 5, c.noise_max_chars);
    log->Prefix(now_us, "pipeline_scheduler.py:88");
    log->Line("Schedule Profiler start at step " + std::to_string(c.first_step) + " and end at step " +
              std::to_string(c.first_step + c.steps + 1));
  }
  Random jitter_rng(c.seed * 7919 + 1);  // apart from the schedule's randomness
  if (c.sync_rounds > 0) WriteSyncRounds(c, logs, now_us + 50, 0, jitter_rng);
  const double target_bytes = c.size_mb * 1e6;
  for (int step = 0;; ++step) {
    std::uint64_t total = 0;
    for (auto& log : logs) total += log->bytes();
    if (c.size_mb > 0 ? total >= target_bytes : step >= c.steps) break;

    const double step_start = now_us + 200;
    const auto ops = SimulateStep(c, step_start, schedule_rng);
    double step_end = step_start;
    for (size_t s = 0; s < logs.size(); ++s) {
      WorkerLog& log = *logs[s];
      const int machine = static_cast<int>(s) / c.workers;
      auto clock = [&](double t) { return Millis(Observed(c, machine, t)); };
      const double stage_end = ops[s].back().end_us;
      step_end = std::max(step_end, stage_end);
      if (c.nvtx) {
        log.Prefix(step_start, "nvtx_helper.cc:31");
        log.Line("NVTX range push: " + std::to_string(c.first_step + step) + ", time: " + clock(step_start - 20));
      }
      log.Noise(step_start, c.noise_per_job * static_cast<int>(ops[s].size()) / 2, c.noise_max_chars);
      if (c.nvtx) {
        log.Prefix(stage_end, "nvtx_helper.cc:40");
        log.Line("NVTX range pop, time: " + clock(stage_end + 15));
      }
      for (size_t j = 0; j < ops[s].size(); ++j) {
        const Op& op = ops[s][j];
        log.Prefix(stage_end + 30, "standalone_executor.cc:217");
        log.Line("Profiler Info: Job (" + std::to_string(j) + "), type = " + KindName(op.kind) +
                 ", micro_batch_id = " + std::to_string(op.micro_batch) +
                 ", job_start_time = " + clock(op.start_us) + ", job_end_time = " + clock(op.end_us));
        log.Noise(stage_end + 40, c.noise_per_job - c.noise_per_job / 2, c.noise_max_chars);
      }
    }
    now_us = step_end + 500;
  }
  if (c.sync_rounds > 0) WriteSyncRounds(c, logs, now_us, c.sync_rounds, jitter_rng);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"jobviz-gen-logs: write synthetic worker logs of a 1F1B pipeline run"};
  Config c;
  app.add_option("--log_dir,--out", c.out_dir, "Directory to write workerlog.N (or machineM/...)")->required();
  app.add_option("--machines", c.machines, "Machines (machineM/ directories when > 1)")->check(CLI::Range(1, 4096));
  app.add_option("--workers", c.workers, "Workers (pipeline stages) per machine")->check(CLI::Range(1, 1024));
  app.add_option("--steps", c.steps, "Steps to write (ignored with --size_mb)")->check(CLI::Range(1, 100000000));
  app.add_option("--microbatches", c.microbatches, "Micro-batches per step")->check(CLI::Range(1, 100000));
  app.add_option("--first_step", c.first_step, "Number of the first profiled step");
  app.add_flag("--nvtx", c.nvtx, "Write NVTX step push/pop lines");
  app.add_option("--noise_per_job", c.noise_per_job, "Noise lines per job line")->check(CLI::Range(0, 100000));
  app.add_option("--noise_max_chars", c.noise_max_chars, "Longest noise line")->check(CLI::Range(21, 100000));
  app.add_option("--size_mb", c.size_mb, "Keep writing steps until all logs hold this many MB");
  app.add_option("--forward_us", c.forward_us, "Forward job duration");
  app.add_option("--backward_us", c.backward_us, "Backward job duration");
  app.add_option("--transfer_us", c.transfer_us, "Delay between neighbouring stages");
  app.add_option("--start_ms", c.start_ms, "Wall clock of the first step, ms since the epoch");
  app.add_option("--seed", c.seed, "Random seed");
  std::string skew, drift;
  app.add_option("--clock_skew_ms", skew, "Clock offset per machine: machine1=+3.7,machine2=-1.2");
  app.add_option("--clock_drift_ppm", drift, "Clock drift per machine: machine1=20");
  app.add_option("--sync_rounds", c.sync_rounds, "Clock Sync rounds at the start and again at the end")
      ->check(CLI::Range(0, 1000));
  app.add_option("--sync_jitter_us", c.sync_jitter_us, "Jitter of each clock-sync reading (+-)");
  app.add_flag("--sync_outlier", c.sync_outlier, "Make one round of machine1 500 us off");
  CLI11_PARSE(app, argc, argv);
  try {
    if (!skew.empty()) c.skew_ms = pipeline::ParseMachineValues(skew);
    if (!drift.empty()) c.drift_ppm = pipeline::ParseMachineValues(drift);
    return Generate(c);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "jobviz-gen-logs: %s\n", e.what());
    return 1;
  }
}
