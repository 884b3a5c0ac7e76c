#include "analyse/step_queue.h"

#include <iterator>

namespace jobviz {

StepQueue::StepQueue(int threads, Emit emit, size_t max_queued_jobs)
    : threads_(threads), emit_(std::move(emit)), max_queued_jobs_(max_queued_jobs), thread_([this] { Loop(); }) {}

StepQueue::~StepQueue() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void StepQueue::Add(std::vector<Timeline> ones) {
  if (ones.empty()) return;
  size_t jobs = 0;
  for (const Timeline& one : ones) jobs += CountJobs(one);
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return queued_jobs_ < max_queued_jobs_; });
  queued_jobs_ += jobs;
  queued_.insert(queued_.end(), std::make_move_iterator(ones.begin()), std::make_move_iterator(ones.end()));
  lock.unlock();
  changed_.notify_all();
}

void StepQueue::Drain() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return queued_.empty() && !busy_; });
}

// Takes every step waiting at once: steps that piled up while the last
// ones were analysed are analysed side by side, one thread each.
void StepQueue::Loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stop_ || !queued_.empty(); });
    if (queued_.empty()) return;  // stopping, and nothing left
    std::vector<Timeline> batch(std::make_move_iterator(queued_.begin()), std::make_move_iterator(queued_.end()));
    queued_.clear();
    queued_jobs_ = 0;
    busy_ = true;
    lock.unlock();
    changed_.notify_all();  // room for more
    for (const StepReport& report : AnalyseOneSteps(batch, threads_)) emit_(report);
    batch.clear();
    lock.lock();
    busy_ = false;
    changed_.notify_all();
  }
}

}  // namespace jobviz
