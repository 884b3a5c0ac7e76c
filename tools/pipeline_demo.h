// Shared by the CPU and CUDA backends of jobviz-pipeline-demo.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "jobviz/profiler.h"
#include "pipeline_common.h"

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

using pipeline::Kind;
using pipeline::Op;
using pipeline::OneFOneB;

// True when this build has the CUDA backend; RunCuda returns the exit code.
bool CudaBackendBuilt();
int RunCuda(const Options& options, int stages, std::vector<std::unique_ptr<jobviz::Profiler>>& profilers);

}  // namespace demo
