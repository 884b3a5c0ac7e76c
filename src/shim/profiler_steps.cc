// Profiler's steps (the NVTX-style step lines jobviz reads step boundaries
// from) and its profiling window (which steps are recorded).
#include "profiler_impl.h"

namespace jobviz {

void Profiler::BeginStep(std::int64_t step) {
  NvtxPushStep(step);
  std::lock_guard<std::mutex> lock(impl_->step_mutex);
  const bool has_window = impl_->window_start >= 0 || impl_->window_end >= 0;
  const bool in_window = !has_window || ((impl_->window_start < 0 || step >= impl_->window_start) &&
                                         (impl_->window_end < 0 || step < impl_->window_end));
  if (impl_->shut_down.load()) return;
  recording_.store(in_window, std::memory_order_relaxed);
  impl_->step_open = in_window;
  impl_->current_step = step;
  if (!in_window) return;
  if (has_window && !impl_->window_announced) {
    impl_->AddMarker(RecordKind::kWindow, std::max<std::int64_t>(impl_->window_start, 0),
                     impl_->window_end);
    impl_->window_announced = true;
  }
  // After the window line: jobviz starts a new run at a window line that
  // follows the records of a run.
  if (impl_->sync_communicator && !impl_->sync_started) {
    impl_->sync_started = true;
    SyncClocksLocked(*impl_->sync_communicator, impl_->sync_stream, config_.clock_sync_rounds);
  }
  impl_->AddMarker(RecordKind::kStepPush, step, 0);
}

void Profiler::EndStep() {
  NvtxPopStep();
  std::lock_guard<std::mutex> lock(impl_->step_mutex);
  if (!impl_->step_open || impl_->shut_down.load()) return;
  impl_->AddMarker(RecordKind::kStepPop, 0, 0);
  impl_->step_open = false;
  if (impl_->sync_communicator && impl_->sync_started && !impl_->sync_finished && impl_->window_end >= 0 &&
      impl_->current_step == impl_->window_end - 1) {
    impl_->sync_finished = true;
    SyncClocksLocked(*impl_->sync_communicator, impl_->sync_stream, config_.clock_sync_rounds);
  }
}

void Profiler::SetProfileWindow(std::int64_t start, std::int64_t end) {
  std::lock_guard<std::mutex> lock(impl_->step_mutex);
  if (impl_->shut_down.load()) return;  // after Shutdown nothing is recorded
  impl_->window_start = start;
  impl_->window_end = end;
  impl_->window_announced = false;
  recording_.store(start < 0 && end < 0);
}

}  // namespace jobviz
