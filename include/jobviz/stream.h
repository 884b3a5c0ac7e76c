// Streams the profiler can mark: anything that runs host callbacks in order
// with the work enqueued before them. A CUDA stream (CudaStream, when
// libjobviz is built with CUDA) or the CPU stand-in (CpuStream) used by tests,
// the demo and every machine without a GPU.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace jobviz {

using HostFunction = void (*)(void* argument);

class Stream {
 public:
  virtual ~Stream() = default;
  // Enqueues `function(argument)` to run on a host thread once all work
  // enqueued before it has finished. Returns false if it could not be enqueued.
  virtual bool LaunchHostFunction(HostFunction function, void* argument) = 0;
};

// A fake stream: one worker thread runs enqueued work and host functions
// strictly in order, like a CUDA stream does.
class CpuStream : public Stream {
 public:
  CpuStream();
  ~CpuStream() override;  // runs everything still queued, then stops
  CpuStream(const CpuStream&) = delete;
  CpuStream& operator=(const CpuStream&) = delete;

  bool LaunchHostFunction(HostFunction function, void* argument) override;
  // Simulated device work (the demo's "kernels"; tests).
  void Enqueue(std::function<void()> work);
  void EnqueueSleep(std::chrono::microseconds duration);
  // Blocks until everything enqueued so far has run (cudaStreamSynchronize).
  void Synchronize();

 private:
  struct Task {
    HostFunction function = nullptr;
    void* argument = nullptr;
    std::function<void()> work;
  };
  void Run();

  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<Task> tasks_;
  bool running_task_ = false;
  bool worker_waiting_ = false;
  bool stopping_ = false;
  std::thread worker_;
};

// Wraps an existing cudaStream_t (passed as void* so this header needs no
// CUDA headers). Only in builds with the CUDA backend: IsCudaAvailable().
class CudaStream : public Stream {
 public:
  explicit CudaStream(void* cuda_stream) : stream_(cuda_stream) {}
  bool LaunchHostFunction(HostFunction function, void* argument) override;
  void* handle() const { return stream_; }

 private:
  void* stream_;
};

// True when libjobviz was built with the CUDA backend.
bool IsCudaAvailable();

}  // namespace jobviz
