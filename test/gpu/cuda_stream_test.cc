// GPU test of the CUDA backend: callback order on a real stream, and the
// host-callback timestamps against CUDA events recorded at the same points.
// Exits 77 (meson's "skipped") when there is no CUDA device.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <vector>

#include "jobviz/profiler.h"

namespace {

int failures = 0;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAIL: %s\n", what);
    ++failures;
  }
}

#define CUDA_OK(call) Check((call) == cudaSuccess, #call)

std::int64_t Now() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct Stamp {
  std::atomic<std::int64_t> ns{0};
  std::atomic<int>* counter;
  int order = -1;
};

void TakeStamp(void* p) {
  auto* stamp = static_cast<Stamp*>(p);
  stamp->ns.store(Now());
  stamp->order = stamp->counter->fetch_add(1);
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("no CUDA device: skipped");
    return 77;
  }
  cudaStream_t raw;
  CUDA_OK(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking));
  jobviz::CudaStream stream(raw);
  const size_t bytes = size_t{256} << 20;
  void* buffer = nullptr;
  CUDA_OK(cudaMalloc(&buffer, bytes));

  // 1. Callbacks run in stream order, each after the device work before it.
  constexpr int kMarks = 64;
  std::atomic<int> counter{0};
  std::vector<Stamp> stamps(kMarks);
  std::vector<cudaEvent_t> events(kMarks);
  for (int i = 0; i < kMarks; ++i) {
    stamps[i].counter = &counter;
    CUDA_OK(cudaEventCreate(&events[i]));
    CUDA_OK(cudaMemsetAsync(buffer, i, bytes, raw));  // real device work between marks
    CUDA_OK(cudaEventRecord(events[i], raw));
    Check(stream.LaunchHostFunction(TakeStamp, &stamps[i]), "LaunchHostFunction");
  }
  CUDA_OK(cudaStreamSynchronize(raw));
  for (int i = 0; i < kMarks; ++i) Check(stamps[i].order == i, "callbacks run in stream order");

  // 2. Host-callback intervals against CUDA-event intervals of the same points.
  std::vector<double> errors_us;
  for (int i = 1; i < kMarks; ++i) {
    float event_ms = 0;
    CUDA_OK(cudaEventElapsedTime(&event_ms, events[i - 1], events[i]));
    const double host_us = (stamps[i].ns.load() - stamps[i - 1].ns.load()) / 1e3;
    errors_us.push_back(host_us - event_ms * 1e3);
  }
  std::sort(errors_us.begin(), errors_us.end(), [](double a, double b) { return std::abs(a) < std::abs(b); });
  const double median = std::abs(errors_us[errors_us.size() / 2]);
  const double p99 = std::abs(errors_us[errors_us.size() * 99 / 100]);
  std::printf("host-callback interval minus CUDA-event interval: median %.1f us, p99 %.1f us (%zu intervals)\n",
              median, p99, errors_us.size());
  Check(median < 200, "callback timestamps follow the device within 200 us (median)");

  // 3. The profiler end to end on the real stream.
  {
    jobviz::ProfilerConfig config;
    config.output_path = "/dev/null";
    jobviz::Profiler profiler(config);
    for (int j = 0; j < 100; ++j) {
      jobviz::JobScope job(profiler, stream, "forward", j, 0);
      CUDA_OK(cudaMemsetAsync(buffer, j, bytes / 16, raw));
    }
    CUDA_OK(cudaStreamSynchronize(raw));
    profiler.Shutdown();
    Check(profiler.stats().jobs_recorded == 100 && profiler.stats().records_lost == 0, "all jobs recorded");
  }
  for (cudaEvent_t e : events) cudaEventDestroy(e);
  cudaFree(buffer);
  cudaStreamDestroy(raw);
  std::printf("%s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
