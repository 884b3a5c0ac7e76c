// GPU test of NCCL clock sync with a single rank: jobviz's own NCCL
// communicator, five all-reduce rounds on a CUDA stream, five "Clock Sync"
// lines. Exits 77 (meson's "skipped") without a CUDA device.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "jobviz/clock_sync.h"
#include "jobviz/profiler.h"

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("no CUDA device: skipped");
    return 77;
  }
  int failures = 0;
  const auto check = [&](bool ok, const char* what) {
    std::printf("%s: %s\n", ok ? "ok" : "FAIL", what);
    failures += !ok;
  };
  unsigned char id[jobviz::NcclCommunicator::kUniqueIdBytes];
  check(jobviz::NcclCommunicator::CreateUniqueId(id), "ncclGetUniqueId");
  auto communicator = jobviz::NcclCommunicator::Create(id, 0, 1);
  check(communicator != nullptr, "a one-rank NCCL communicator");
  if (!communicator) return 1;
  cudaStream_t raw;
  cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking);
  jobviz::CudaStream stream(raw);
  const std::filesystem::path log = std::filesystem::temp_directory_path() / "jobviz_nccl_sync_test.log";
  std::filesystem::remove(log);
  {
    jobviz::ProfilerConfig config;
    config.output_path = log.string();
    jobviz::Profiler profiler(config);
    profiler.SyncClocks(*communicator, stream, 5);
    check(cudaStreamSynchronize(raw) == cudaSuccess, "the all-reduces ran");
    profiler.Shutdown();
    check(profiler.stats().records_lost == 0, "no sync round lost");
  }
  std::ifstream in(log);
  int rounds = 0;
  for (std::string line; std::getline(in, line);)
    if (line.find("Clock Sync: rank = 0, round = " + std::to_string(rounds) + ",") != std::string::npos) ++rounds;
  std::printf("%d Clock Sync lines\n", rounds);
  check(rounds == 5, "five Clock Sync lines, rounds 0 to 4");
  communicator.reset();
  cudaStreamDestroy(raw);
  std::filesystem::remove(log);
  std::printf("%s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
