// CpuStream: the CPU stand-in for a CUDA stream.
#include "jobviz/stream.h"

namespace jobviz {

CpuStream::CpuStream() : worker_([this] { Run(); }) {}

CpuStream::~CpuStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  worker_.join();
}

bool CpuStream::LaunchHostFunction(HostFunction function, void* argument) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return false;
    tasks_.push_back({function, argument, {}});
    wake = worker_waiting_;
  }
  // Waking the worker is a system call; skip it while the worker is busy,
  // as it is whenever the stream has work ahead of the callback.
  if (wake) wake_.notify_one();
  return true;
}

void CpuStream::Enqueue(std::function<void()> work) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back({nullptr, nullptr, std::move(work)});
    wake = worker_waiting_;
  }
  if (wake) wake_.notify_one();
}

void CpuStream::EnqueueSleep(std::chrono::microseconds duration) {
  Enqueue([duration] { std::this_thread::sleep_for(duration); });
}

void CpuStream::Synchronize() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return tasks_.empty() && !running_task_; });
}

void CpuStream::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (tasks_.empty()) {
      idle_.notify_all();
      if (stopping_) return;
      worker_waiting_ = true;
      wake_.wait(lock, [this] { return !tasks_.empty() || stopping_; });
      worker_waiting_ = false;
      continue;
    }
    Task task = std::move(tasks_.front());
    tasks_.pop_front();
    running_task_ = true;
    lock.unlock();
    if (task.function) task.function(task.argument);
    else task.work();
    lock.lock();
    running_task_ = false;
  }
}

}  // namespace jobviz
