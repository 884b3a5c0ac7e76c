// GPU test of the watchdog on a real stream: a job whose kernel spins on a
// word the host sets late shows as in flight ("still running"), the job
// queued behind it as "not started", and once the host lets go both end
// with the right times. Exits 77 (meson's "skipped") without a CUDA device.
//
// usage: blocked_stream_test [LOG_DIR]
// With LOG_DIR it leaves LOG_DIR/stalled/workerlog.0 (the log while the job
// is held) and LOG_DIR/finished/workerlog.0 for jobviz (tools/gpu-checks).
#include <cuda_runtime.h>

#include "parse/log_jobs.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>
#include <thread>

#include "jobviz/profiler.h"
#include "spin_kernels.cuh"

namespace {

int failures = 0;

void Check(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAIL", what);
  if (!ok) ++failures;
}

std::int64_t HostNanos() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

constexpr unsigned long long kJobNs = 200'000;  // 200 us
constexpr auto kHold = std::chrono::milliseconds(1500);

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("no CUDA device: skipped");
    return 77;
  }
  namespace fs = std::filesystem;
  const fs::path dir = argc > 1 ? fs::path(argv[1]) : fs::temp_directory_path() / "jobviz_blocked_stream";
  fs::create_directories(dir / "stalled");
  fs::create_directories(dir / "finished");
  const fs::path log = dir / "finished" / "workerlog.0";
  fs::remove(log);

  unsigned long long* word = nullptr;  // mapped host memory: the host lets the kernel go
  cudaStream_t raw;
  if (cudaHostAlloc(reinterpret_cast<void**>(&word), sizeof *word, cudaHostAllocMapped) != cudaSuccess ||
      cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking) != cudaSuccess) {
    std::puts("FAIL: cudaHostAlloc / cudaStreamCreate");
    return 1;
  }
  *word = 1;  // both kernels once, so that loading them is not timed below
  WaitForHost<<<1, 1, 0, raw>>>(word);
  SpinKernel<<<1, 1, 0, raw>>>(1000);
  cudaStreamSynchronize(raw);
  *word = 0;
  jobviz::CudaStream stream(raw);
  jobviz::ProfilerConfig config;
  config.output_path = log.string();
  config.stall_after_s = 0.3;
  jobviz::Profiler profiler(config);

  // Step 0: four jobs that run. Step 1: the same four, the first (job 4) held
  // by the host, the others queued behind it.
  profiler.BeginStep(0);
  for (int j = 0; j < 4; ++j) {
    jobviz::JobScope job(profiler, stream, j % 2 ? "backward" : "forward", j, j / 2);
    SpinKernel<<<1, 1, 0, raw>>>(kJobNs);
  }
  cudaStreamSynchronize(raw);  // step 0's jobs inside step 0, as a loop that reads its loss has them
  profiler.EndStep();
  profiler.BeginStep(1);
  const std::int64_t held_from = HostNanos();
  {
    jobviz::JobScope job(profiler, stream, "forward", 4, 0);
    WaitForHost<<<1, 1, 0, raw>>>(word);
  }
  for (int j = 5; j < 8; ++j) {  // the rest of step 1, as step 0: queued behind job 4
    jobviz::JobScope job(profiler, stream, j % 2 ? "backward" : "forward", j, (j - 4) / 2);
    SpinKernel<<<1, 1, 0, raw>>>(kJobNs);
  }
  std::this_thread::sleep_for(kHold);
  fs::copy_file(log, dir / "stalled" / "workerlog.0", fs::copy_options::overwrite_existing);
  const std::int64_t released = HostNanos();
  *word = 1;
  const bool synced = cudaStreamSynchronize(raw) == cudaSuccess;
  profiler.EndStep();
  profiler.Shutdown();
  // Both logs as jobviz reads them (parse/log_jobs.h).
  namespace logs = jobviz::log_jobs;
  const logs::LogJobs stalled = logs::ReadLogJobs((dir / "stalled" / "workerlog.0").string());
  const logs::LogJobs finished = logs::ReadLogJobs(log.string());

  Check(synced, "the stream finishes once the host lets go");
  Check(stalled.error.empty() && finished.error.empty() && stalled.skipped == 0 && finished.skipped == 0,
        "jobviz reads both logs with no line skipped");
  const logs::JobLine* running = logs::FindJob(stalled, "4", "forward", /*in_flight=*/true);
  const logs::JobLine* waiting = logs::FindJob(stalled, "5", "backward", /*in_flight=*/true);
  Check(running && running->started, "while held, job 4 has a 'still running' line");
  Check(waiting && !waiting->started, "while held, job 5 has a 'not started' line");
  Check(!logs::FindJob(stalled, "4", "forward"), "while held, job 4 has no job line");
  const std::int64_t running_since = running ? running->start : 0;
  Check(running_since >= held_from - 1'000'000 && running_since <= held_from + 5'000'000,
        "the in-flight line's start is when the stream reached the job (within 5 ms of the enqueue)");

  const logs::JobLine* job4 = logs::FindJob(finished, "4", "forward");
  const logs::JobLine* job5 = logs::FindJob(finished, "5", "backward");
  Check(job4 && job5, "jobs 4 and 5 have their job lines once the stream finished");
  const std::int64_t start4 = job4 ? job4->start : 0, end4 = job4 ? job4->end : 0;
  const std::int64_t start5 = job5 ? job5->start : 0, end5 = job5 ? job5->end : 0;
  std::printf("job 4: start %+.3f ms after the enqueue, end %+.3f ms after the release; job 5: %.3f ms long\n",
              (start4 - held_from) / 1e6, (end4 - released) / 1e6, (end5 - start5) / 1e6);
  Check(start4 == running_since, "job 4's line has the in-flight line's start");
  Check(end4 >= released && end4 <= released + 2'000'000, "job 4 ends within 2 ms after the host let go");
  Check(start5 >= end4 && end5 - start5 >= static_cast<std::int64_t>(kJobNs) &&
            end5 - start5 <= static_cast<std::int64_t>(kJobNs) + 1'000'000,
        "job 5 starts after job 4 and runs its 200 us (+1 ms at most)");
  const jobviz::ProfilerStats stats = profiler.stats();
  Check(stats.jobs_recorded == 8 && stats.records_lost == 0, "eight jobs recorded, none lost");
  cudaStreamDestroy(raw);
  cudaFreeHost(word);
  std::printf("%s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
