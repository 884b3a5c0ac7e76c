// CUDA backend of jobviz-pipeline-demo: each stage is a stream on GPU
// stage % device_count running spin kernels of the configured length; stages
// hand activations and gradients over with CUDA events; every job is marked
// with libjobviz on its stream.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "jobviz/clock_sync.h"
#include "pipeline_demo.h"
#include "spin_kernels.cuh"

namespace demo {

namespace {

bool Ok(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return true;
  std::fprintf(stderr, "jobviz-pipeline-demo: %s: %s\n", what, cudaGetErrorString(status));
  return false;
}

// A CUDA event plus the step it was last recorded for: a stage must not
// wait on its neighbour's event before the neighbour recorded it for this
// step, or it would wait on the previous step's completion.
struct HandOff {
  cudaEvent_t event = nullptr;
  std::atomic<int> recorded_step{-1};
};

}  // namespace

bool CudaBackendBuilt() { return true; }

int RunCuda(const Options& o, int stages, std::vector<std::unique_ptr<jobviz::Profiler>>& profilers) {
  int devices = 0;
  if (!Ok(cudaGetDeviceCount(&devices), "cudaGetDeviceCount") || devices == 0) return 1;
  const int mbs = o.microbatches;
  std::vector<std::unique_ptr<HandOff[]>> forward_done(stages), backward_done(stages);
  std::vector<cudaStream_t> streams(stages);
  for (int s = 0; s < stages; ++s) {
    if (!Ok(cudaSetDevice(s % devices), "cudaSetDevice") ||
        !Ok(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking), "cudaStreamCreate"))
      return 1;
    forward_done[s].reset(new HandOff[mbs]);
    backward_done[s].reset(new HandOff[mbs]);
    for (int i = 0; i < mbs; ++i)
      if (!Ok(cudaEventCreateWithFlags(&forward_done[s][i].event, cudaEventDisableTiming), "cudaEventCreate") ||
          !Ok(cudaEventCreateWithFlags(&backward_done[s][i].event, cudaEventDisableTiming), "cudaEventCreate"))
        return 1;
  }
  const auto ns = [](int us) { return static_cast<unsigned long long>(us) * 1000ull; };
  // Clock sync with NCCL needs one rank per GPU.
  unsigned char unique_id[jobviz::NcclCommunicator::kUniqueIdBytes];
  const bool sync = o.sync_rounds > 0 && stages <= devices && jobviz::NcclCommunicator::CreateUniqueId(unique_id);
  if (o.sync_rounds > 0 && !sync)
    std::fprintf(stderr, "jobviz-pipeline-demo: no clock sync (NCCL needs one GPU per stage and NCCL support)\n");
  std::atomic<bool> failed{false};
  auto run_stage = [&](int s) {
    cudaSetDevice(s % devices);
    cudaStream_t raw = streams[s];
    jobviz::CudaStream stream(raw);
    jobviz::Profiler& profiler = *profilers[s];
    std::unique_ptr<jobviz::NcclCommunicator> communicator;
    if (sync && (communicator = jobviz::NcclCommunicator::Create(unique_id, s, stages)))
      profiler.AttachClockSync(communicator.get(), &stream);
    const auto ops = OneFOneB(s, stages, mbs);
    for (int step = 0; step < o.steps && !failed; ++step) {
      profiler.BeginStep(step);
      long long job_id = 0;
      for (const Op& op : ops) {
        const bool forward = op.kind == Kind::kForward;
        HandOff* input = nullptr;
        if (forward && s > 0) input = &forward_done[s - 1][op.micro_batch];
        if (!forward && s + 1 < stages) input = &backward_done[s + 1][op.micro_batch];
        if (input) {
          while (input->recorded_step.load(std::memory_order_acquire) < step) std::this_thread::yield();
          cudaStreamWaitEvent(raw, input->event, 0);
          SpinKernel<<<1, 1, 0, raw>>>(ns(o.transfer_us));  // the transfer
        }
        {
          jobviz::JobScope job(profiler, stream, forward ? "forward" : "backward", job_id++, op.micro_batch);
          SpinKernel<<<1, 1, 0, raw>>>(ns(forward ? o.forward_us : o.backward_us));
        }
        HandOff& output = (forward ? forward_done : backward_done)[s][op.micro_batch];
        cudaEventRecord(output.event, raw);
        output.recorded_step.store(step, std::memory_order_release);
      }
      {
        jobviz::JobScope job(profiler, stream, "optimizer", job_id++, 0);
        SpinKernel<<<1, 1, 0, raw>>>(ns(o.optimizer_us));
      }
      if (!Ok(cudaStreamSynchronize(raw), "cudaStreamSynchronize")) failed = true;
      profiler.EndStep();
      if (cudaGetLastError() != cudaSuccess) failed = true;
    }
    if (!Ok(cudaStreamSynchronize(raw), "cudaStreamSynchronize")) failed = true;
    profiler.AttachClockSync(nullptr, nullptr);
  };
  std::vector<std::thread> threads;
  for (int s = 0; s < stages; ++s) threads.emplace_back(run_stage, s);
  for (auto& thread : threads) thread.join();
  for (int s = 0; s < stages; ++s) {
    for (int i = 0; i < mbs; ++i) {
      cudaEventDestroy(forward_done[s][i].event);
      cudaEventDestroy(backward_done[s][i].event);
    }
    cudaStreamDestroy(streams[s]);
  }
  return failed ? 1 : 0;
}

}  // namespace demo
