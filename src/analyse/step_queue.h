// Steps analysed off the thread that finds them, handed back in the order
// they came: `jobviz follow` reads and builds its next turn while the steps
// of the last one are analysed. A step of 2,048 workers takes tens of
// milliseconds to analyse; done inside the turn, that time was added to
// every step's delay, and to the wait before the next turn.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "analyse/step_report.h"

namespace jobviz {

class StepQueue {
 public:
  // `emit` is called on the queue's own thread, once a step, in order.
  using Emit = std::function<void(const StepReport&)>;
  StepQueue(int threads, Emit emit, size_t max_queued_jobs = kMaxQueuedJobs);
  ~StepQueue();  // what was added is still analysed and emitted
  StepQueue(const StepQueue&) = delete;
  StepQueue& operator=(const StepQueue&) = delete;

  // Steps cut out of a timeline (model/step_window.h), one timeline each.
  // Waits while `max_queued_jobs` jobs wait already: they are held until
  // analysed, so a queue that falls behind slows the reader down instead
  // of growing.
  void Add(std::vector<Timeline> ones);
  // Returns once every step added has been emitted.
  void Drain();

  static constexpr size_t kMaxQueuedJobs = 1 << 19;  // eight steps of 2,048 workers

 private:
  void Loop();

  const int threads_;
  const Emit emit_;
  const size_t max_queued_jobs_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Timeline> queued_;
  size_t queued_jobs_ = 0;
  bool busy_ = false, stop_ = false;
  std::thread thread_;  // last: started once the rest is set up
};

}  // namespace jobviz
