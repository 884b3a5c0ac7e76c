// Shared by the CPU and CUDA backends of jobviz-pipeline-demo.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "jobviz/profiler.h"

namespace demo {

struct Options {
  std::string log_dir = "demo_logs";
  int stages = 0, machines = 1, devices = 4;
  int microbatches = 8, steps = 6;
  long long profile_start = -1, profile_end = -1;
  std::string backend = "cpu";
  int forward_us = 800, backward_us = 1600, optimizer_us = 300, transfer_us = 100;
  bool append = false;
  // Emulated clock error per machine index (CPU backend), and sync rounds.
  std::map<int, double> clock_skew_ms, clock_drift_ppm;
  int sync_rounds = 5;
};

enum class Kind { kForward, kBackward };
struct Op {
  Kind kind;
  int micro_batch;
};

// 1F1B order of one stage: warm-up forwards, one forward one backward, cool-down backwards.
inline std::vector<Op> OneFOneB(int stage, int stages, int microbatches) {
  std::vector<Op> ops;
  const int warmup = std::min(stages - stage - 1, microbatches);
  for (int i = 0; i < warmup; ++i) ops.push_back({Kind::kForward, i});
  for (int i = 0; i < microbatches - warmup; ++i) {
    ops.push_back({Kind::kForward, warmup + i});
    ops.push_back({Kind::kBackward, i});
  }
  for (int i = microbatches - warmup; i < microbatches; ++i) ops.push_back({Kind::kBackward, i});
  return ops;
}

// True when this build has the CUDA backend; RunCuda returns the exit code.
bool CudaBackendBuilt();
int RunCuda(const Options& options, int stages, std::vector<std::unique_ptr<jobviz::Profiler>>& profilers);

}  // namespace demo
