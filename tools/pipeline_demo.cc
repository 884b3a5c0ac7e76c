// jobviz-pipeline-demo: runs a real 1F1B pipeline schedule instrumented with
// libjobviz and writes the worker logs a launcher would, for jobviz to draw.
//
// CPU backend: one thread and one CpuStream per stage; work is simulated with
// sleeps; a stage waits for its neighbour through an event set by a host
// function on the neighbour's stream (as cudaStreamWaitEvent would).
#include <CLI/CLI.hpp>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "jobviz/clock_sync.h"
#include "jobviz/profiler.h"
#include "pipeline_demo.h"

namespace demo {
namespace {

// A one-shot flag a stream sets and another stream waits for.
class Event {
 public:
  void Set() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      set_ = true;
    }
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [this] { return set_; });
  }
  void Reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    set_ = false;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool set_ = false;
};

struct Pipeline {
  const Options& options;
  int stages;
  // done[kind][stage][micro_batch], reset between steps.
  std::vector<std::vector<std::unique_ptr<Event>>> forward_done, backward_done;
  std::mutex barrier_mutex;
  std::condition_variable barrier_cv;
  int barrier_waiting = 0, barrier_generation = 0;

  Pipeline(const Options& o, int s) : options(o), stages(s) {
    for (auto* table : {&forward_done, &backward_done}) {
      table->resize(stages);
      for (auto& row : *table)
        for (int i = 0; i < o.microbatches; ++i) row.push_back(std::make_unique<Event>());
    }
  }

  // All stages meet between steps so events can be reset safely.
  void Barrier() {
    std::unique_lock<std::mutex> lock(barrier_mutex);
    const int generation = barrier_generation;
    if (++barrier_waiting == stages) {
      barrier_waiting = 0;
      ++barrier_generation;
      barrier_cv.notify_all();
    } else {
      barrier_cv.wait(lock, [&] { return barrier_generation != generation; });
    }
  }

  void RunStage(int stage, jobviz::Profiler& profiler, jobviz::Communicator* communicator) {
    jobviz::CpuStream stream;
    // Clock sync at the start and end of the profiling window.
    if (communicator && options.sync_rounds > 0) profiler.AttachClockSync(communicator, &stream);
    const auto ops = OneFOneB(stage, stages, options.microbatches);
    const auto transfer = std::chrono::microseconds(options.transfer_us);
    for (int step = 0; step < options.steps; ++step) {
      profiler.BeginStep(step);
      std::int64_t job_id = 0;
      for (const Op& op : ops) {
        const bool forward = op.kind == Kind::kForward;
        // Wait for the activation (forward) or gradient (backward) from the neighbour.
        Event* input = nullptr;
        if (forward && stage > 0) input = forward_done[stage - 1][op.micro_batch].get();
        if (!forward && stage + 1 < stages) input = backward_done[stage + 1][op.micro_batch].get();
        if (input) stream.Enqueue([input, transfer] {
          input->Wait();
          std::this_thread::sleep_for(transfer);
        });
        {
          jobviz::JobScope job(profiler, stream, forward ? "forward" : "backward", job_id++, op.micro_batch);
          stream.EnqueueSleep(std::chrono::microseconds(forward ? options.forward_us : options.backward_us));
        }
        Event* output = (forward ? forward_done : backward_done)[stage][op.micro_batch].get();
        stream.Enqueue([output] { output->Set(); });
      }
      {
        jobviz::JobScope job(profiler, stream, "optimizer", job_id++, 0);
        stream.EnqueueSleep(std::chrono::microseconds(options.optimizer_us));
      }
      stream.Synchronize();  // the step ends when its work has run, as the framework waits for it
      profiler.EndStep();
      Barrier();
      for (auto* table : {&forward_done, &backward_done})
        for (auto& event : (*table)[stage]) event->Reset();
      Barrier();
    }
    stream.Synchronize();
    profiler.AttachClockSync(nullptr, nullptr);
  }
};

int Run(const Options& o) {
  namespace fs = std::filesystem;
  const int per_machine = o.stages > 0 ? o.stages : o.devices;
  const int machines = o.stages > 0 ? 1 : o.machines;
  const int stages = per_machine * machines;
  if (o.backend == "cuda" && !CudaBackendBuilt()) {
    std::fprintf(stderr, "jobviz-pipeline-demo: this build has no CUDA backend (configure with -Dcuda=enabled)\n");
    return 2;
  }
  std::vector<std::unique_ptr<jobviz::Profiler>> profilers;
  for (int s = 0; s < stages; ++s) {
    fs::path dir = o.log_dir;
    if (machines > 1) dir /= "machine" + std::to_string(s / per_machine);
    fs::create_directories(dir);
    const fs::path log = dir / ("workerlog." + std::to_string(s % per_machine));
    if (!o.append) std::ofstream(log, std::ios::trunc);
    jobviz::ProfilerConfig config;
    config.global_rank = s;
    config.local_worker = s % per_machine;
    config.world_size = stages;
    config.host_name = "machine" + std::to_string(s / per_machine);
    config.output_path = log.string();
    config.profile_start = o.profile_start;
    config.profile_end = o.profile_end;
    config.clock_sync_rounds = o.sync_rounds;
    const int machine = s / per_machine;
    if (o.backend == "cpu") {  // on GPUs the machines' clocks are real
      if (o.clock_skew_ms.count(machine))
        config.emulated_clock_offset_ns = static_cast<std::int64_t>(o.clock_skew_ms.at(machine) * 1e6);
      if (o.clock_drift_ppm.count(machine)) config.emulated_clock_drift_ppm = o.clock_drift_ppm.at(machine);
    }
    profilers.push_back(std::make_unique<jobviz::Profiler>(config));
  }
  if (o.backend == "cuda") {
    const int status = RunCuda(o, stages, profilers);
    if (status != 0) return status;
  } else {
    Pipeline pipeline(o, stages);
    auto communicators = jobviz::CpuCommunicator::CreateGroup(stages);
    std::vector<std::thread> threads;
    for (int s = 0; s < stages; ++s)
      threads.emplace_back([&, s] { pipeline.RunStage(s, *profilers[s], communicators[s].get()); });
    for (auto& thread : threads) thread.join();
  }
  std::uint64_t jobs = 0, lost = 0;
  for (auto& profiler : profilers) {
    profiler->Shutdown();
    jobs += profiler->stats().jobs_recorded;
    lost += profiler->stats().records_lost;
  }
  std::fprintf(stderr, "jobviz-pipeline-demo: %d stages on %d machine(s), %d steps: %llu jobs recorded, %llu lost; logs in %s\n",
               stages, machines, o.steps, static_cast<unsigned long long>(jobs),
               static_cast<unsigned long long>(lost), o.log_dir.c_str());
  return lost == 0 ? 0 : 1;
}

}  // namespace

#ifndef JOBVIZ_DEMO_CUDA
bool CudaBackendBuilt() { return false; }
int RunCuda(const Options&, int, std::vector<std::unique_ptr<jobviz::Profiler>>&) { return 2; }
#endif

}  // namespace demo

int main(int argc, char** argv) {
  using namespace demo;
  CLI::App app{"jobviz-pipeline-demo: a 1F1B pipeline instrumented with libjobviz"};
  Options o;
  app.add_option("--log_dir", o.log_dir, "Where to write workerlog.N (machineM/workerlog.N with --machines > 1)");
  auto* stages = app.add_option("--stages", o.stages, "Pipeline stages on one machine")->check(CLI::Range(1, 256));
  app.add_option("--machines", o.machines, "Machines (one stage per worker)")->check(CLI::Range(1, 64))->excludes(stages);
  app.add_option("--devices", o.devices, "Workers per machine")->check(CLI::Range(1, 64))->excludes(stages);
  app.add_option("--microbatches", o.microbatches, "Micro-batches per step")->check(CLI::Range(1, 10000));
  app.add_option("--steps", o.steps, "Steps to run")->check(CLI::Range(1, 1000000));
  app.add_option("--profile_start", o.profile_start, "First profiled step (JOBVIZ_PROFILE_START)");
  app.add_option("--profile_end", o.profile_end, "Step where profiling ends (JOBVIZ_PROFILE_END)");
  app.add_option("--backend", o.backend, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--forward_us", o.forward_us, "Forward job length")->check(CLI::Range(0, 10000000));
  app.add_option("--backward_us", o.backward_us, "Backward job length")->check(CLI::Range(0, 10000000));
  app.add_option("--optimizer_us", o.optimizer_us, "Optimizer job length")->check(CLI::Range(0, 10000000));
  app.add_option("--transfer_us", o.transfer_us, "Hand-off delay between stages")->check(CLI::Range(0, 10000000));
  app.add_flag("--append", o.append, "Append to existing workerlogs, as the launcher does");
  std::string skew, drift;
  app.add_option("--clock_skew_ms", skew, "Emulated clock offset per machine (CPU backend): machine1=+3.7,machine2=-1.2");
  app.add_option("--clock_drift_ppm", drift, "Emulated clock drift per machine (CPU backend): machine1=20");
  app.add_option("--sync_rounds", o.sync_rounds, "Clock sync rounds at the window's start and end (0: none)")
      ->check(CLI::Range(0, 1000));
  CLI11_PARSE(app, argc, argv);
  try {
    if (!skew.empty()) o.clock_skew_ms = pipeline::ParseMachineValues(skew);
    if (!drift.empty()) o.clock_drift_ppm = pipeline::ParseMachineValues(drift);
    return Run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "jobviz-pipeline-demo: %s\n", e.what());
    return 1;
  }
}
