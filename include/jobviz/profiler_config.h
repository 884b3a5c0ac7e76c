// libjobviz: what a Profiler (jobviz/profiler.h) is made with: the rank and
// its log, the profiling window, the clock sync, the topology line, the
// watchdog and how CUDA streams are timed (docs/runtime-shim.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace jobviz {

struct ProfilerConfig {
  int global_rank = 0;
  int local_worker = 0;  // the N of workerlog.N
  int world_size = 1;
  std::string host_name;  // default: gethostname()
  // Where lines go: "" = stderr (the launcher puts it into workerlog.N),
  // otherwise this file, appended to.
  std::string output_path;
  size_t capacity = 1 << 16;  // records in flight; rounded up to a power of two
  // Profiling window by step numbers, as the framework's
  // job_schedule_profiler_start/end: records while start <= step < end.
  // -1 = unset; JOBVIZ_PROFILE_START / JOBVIZ_PROFILE_END fill unset values.
  // With no window every step is recorded.
  std::int64_t profile_start = -1, profile_end = -1;
  int flush_interval_ms = 20;  // how often the background writer wakes up
  int clock_sync_rounds = 5;   // rounds per SyncClocks()
  // Pretend this host's clock is off (CPU backend tests and the demo's
  // emulated machines): readings become t + offset + (t - start) * drift.
  std::int64_t emulated_clock_offset_ns = 0;
  double emulated_clock_drift_ppm = 0;
  // Where this rank sits in a hybrid-parallel job, when the framework does
  // not print it (Paddle's HybridParallelInfo line): its pipeline stage, its
  // replica (data parallel / sharding) and its tensor-parallel index. With
  // pp_rank >= 0 the constructor writes one HybridParallelInfo line, Paddle's
  // with coordinates: "HybridParallelInfo: rank_id: 5, pp_rank: 1, dp_rank: 0,
  // tp_rank: 1"; -1 (the
  // default): none (SetTopology can write it later). Values below 10^6, and
  // (pp_rank+1)(dp_rank+1)(tp_rank+1) at most 10^7 (what jobviz reads back).
  int pp_rank = -1, dp_rank = 0, tp_rank = 0;
  // The watchdog: a job begun and not ended after this many seconds gets a
  // line at once ("Profiler Info: Job (7) still running, ..."), and one
  // enqueued whose start never came ("... not started, ..."): what a rank
  // hangs in, which its job line (written when the job ends) never shows.
  // One line per job; 0 turns it off (docs/runtime-shim.md).
  double stall_after_s = 60;
  // How jobs on a CUDA stream are timed (docs/runtime-shim.md, "On a GPU"):
  // kDeviceEvents, a CUDA event at each job start and end, timed by the GPU
  // and put on the host clock by the writer thread; or kHostCallbacks, a
  // host callback at each that reads the host clock. The environment's
  // JOBVIZ_CUDA_TIMING=events|callbacks overrides. CpuStream always uses
  // callbacks; so does clock sync.
  enum class CudaTiming { kDeviceEvents, kHostCallbacks };
  CudaTiming cuda_timing = CudaTiming::kDeviceEvents;
};

}  // namespace jobviz
