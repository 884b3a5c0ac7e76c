// Profiler: the public API (jobs, steps, window, clock sync, shutdown) over
// the record ring and writer of profiler_impl.h / profiler_writer.cc; made
// (its log opened, its header written) in profiler_open.cc.
#include "profiler_impl.h"

namespace jobviz {

namespace {

// A job type is one word (\w+): anything else would write lines that jobviz
// rejects, or inject lines of its own through a newline.
bool IsWord(std::string_view type) {
  return !type.empty() && std::all_of(type.begin(), type.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

JobToken Profiler::BeginJob(Stream& stream, std::string_view type, std::int64_t job_id, std::int64_t micro_batch) {
  if (!recording_.load(std::memory_order_relaxed)) return {};
  if (!IsWord(type) || micro_batch < 0) {
    impl_->refused.fetch_add(1, std::memory_order_relaxed);
    return {};
  }
  const int type_index = impl_->InternType(type);
  std::uint64_t index;
  Record* record = type_index < 0 ? nullptr : impl_->Claim(&index);
  if (!record) {
    if (type_index < 0) impl_->lost.fetch_add(1, std::memory_order_relaxed);
    return {};
  }
  record->kind = RecordKind::kJob;
  record->type = static_cast<std::uint16_t>(type_index);
  record->a = job_id;
  record->b = micro_batch;
  if (!impl_->Mark(stream, *record, index, kStartEvent)) {
    impl_->lost.fetch_add(1, std::memory_order_relaxed);
    record->state.store(kAbandoned, std::memory_order_release);
    return {};
  }
  impl_->jobs.fetch_add(1, std::memory_order_relaxed);
  return {index};
}

bool Profiler::EndJob(Stream& stream, JobToken token) {
  if (!token.valid()) return true;  // a job not recorded (outside the window, a full buffer): nothing to end
  Record* record = &impl_->ring[token.index & impl_->mask];
  // A token from an earlier claim of this slot, or a second end: refused.
  if (record->claim.load(std::memory_order_acquire) != token.index ||
      record->end_enqueued.exchange(true, std::memory_order_acq_rel)) {
    impl_->refused.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  if (!impl_->Mark(stream, *record, token.index, kEndEvent)) {
    impl_->lost.fetch_add(1, std::memory_order_relaxed);
    impl_->jobs.fetch_sub(1, std::memory_order_relaxed);
    record->state.store(kAbandoned, std::memory_order_release);
  }
  return true;
}

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

void Profiler::SyncClocks(Communicator& communicator, Stream& stream, int rounds) {
  std::lock_guard<std::mutex> lock(impl_->step_mutex);
  if (impl_->shut_down.load()) return;
  SyncClocksLocked(communicator, &stream, rounds < 0 ? config_.clock_sync_rounds : rounds);
}

void Profiler::SyncClocks(BarrierCommunicator& communicator, int rounds) {
  std::lock_guard<std::mutex> lock(impl_->step_mutex);
  if (impl_->shut_down.load()) return;
  SyncClocksLocked(communicator, nullptr, rounds < 0 ? config_.clock_sync_rounds : rounds);
}

void Profiler::SyncClocksLocked(Communicator& communicator, Stream* stream, int rounds) {
  for (int k = 0; k < rounds; ++k) {
    const std::int64_t round = impl_->next_round++;
    if (communicator.OnHost()) {
      impl_->HostSyncRound(communicator, round);
      continue;
    }
    // The collective goes on the stream whether or not the record fits, so
    // every rank enqueues the same collectives.
    const bool enqueued = stream && communicator.EnqueueCollective(*stream);
    std::uint64_t index;
    Record* record = impl_->Claim(&index);
    if (!record) continue;
    record->kind = RecordKind::kClockSync;
    record->a = impl_->rank;
    record->b = round;
    if (!enqueued || !stream->LaunchHostFunction(OnSyncPoint, record)) {
      impl_->lost.fetch_add(1, std::memory_order_relaxed);
      record->state.store(kAbandoned, std::memory_order_release);
    }
  }
}

void Profiler::AttachClockSync(Communicator* communicator, Stream* stream) {
  std::lock_guard<std::mutex> lock(impl_->step_mutex);
  const bool usable = communicator && (stream || communicator->OnHost());
  impl_->sync_communicator = usable ? communicator : nullptr;
  impl_->sync_stream = usable ? stream : nullptr;
}

void Profiler::SetProfileWindow(std::int64_t start, std::int64_t end) {
  std::lock_guard<std::mutex> lock(impl_->step_mutex);
  if (impl_->shut_down.load()) return;  // after Shutdown nothing is recorded
  impl_->window_start = start;
  impl_->window_end = end;
  impl_->window_announced = false;
  recording_.store(start < 0 && end < 0);
}

void Profiler::Shutdown(int timeout_ms, bool warn_on_stderr) {
  if (impl_->shut_down.exchange(true)) return;
  recording_.store(false);
  // Ends already enqueued may still be waiting for their streams; jobs never
  // ended are not waited for.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    impl_->Drain();
    if (!impl_->AwaitsAnyCallback() || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  {
    std::lock_guard<std::mutex> lock(impl_->writer_mutex);
    impl_->stopping = true;
  }
  impl_->writer_wake.notify_one();
  impl_->writer.join();
  {
    std::lock_guard<std::mutex> lock(impl_->drain_mutex);
    for (std::uint64_t r = impl_->read.load(); r < impl_->write.load(); ++r) impl_->GiveUp(impl_->ring[r & impl_->mask]);
  }
  impl_->Drain(Impl::DrainMode::kEverything);
  // What is still pending waits for a callback that did not come in time
  // (an end on a stream that is still busy): lost; the jobs among them leave
  // the jobs recorded.
  for (std::uint64_t r = impl_->read.load(); r < impl_->write.load(); ++r) {
    const Record& record = impl_->ring[r & impl_->mask];
    if (record.state.load() != kPending) continue;
    impl_->lost.fetch_add(1);
    if (record.kind == RecordKind::kJob) impl_->jobs.fetch_sub(1);
  }
  const ProfilerStats s = stats();
  impl_->logger->info(
      "Profiler Stats: rank = {}, jobs recorded = {}, records lost = {}, calls refused = {}, jobs never ended = {}",
      config_.global_rank, s.jobs_recorded, s.records_lost, s.calls_refused, s.jobs_never_ended);
  impl_->logger->flush();
  if (warn_on_stderr && s.jobs_never_ended > 0) {
    const NeverEndedJob first = impl_->never_ended_jobs[0];
    std::fprintf(stderr,
                 "jobviz: rank %d: %llu job(s) begun and never ended, their lines not written (first: %s, "
                 "micro-batch %lld, job id %lld); every BeginJob needs its EndJob. Details in %s\n",
                 config_.global_rank, static_cast<unsigned long long>(s.jobs_never_ended), first.type,
                 static_cast<long long>(first.micro_batch), static_cast<long long>(first.job_id),
                 config_.output_path.empty() ? "the log" : config_.output_path.c_str());
  }
}

void Profiler::SetStallAfter(double seconds) {
  const double ns = seconds * 1e9;
  impl_->stall_after_ns.store(ns >= 1 && ns < 1e18 ? static_cast<std::int64_t>(ns) : 0, std::memory_order_relaxed);
}

ProfilerStats Profiler::stats() const {
  return {impl_->jobs.load(), impl_->lost.load(), impl_->lines.load(), impl_->refused.load(),
          impl_->never_ended.load()};
}

std::vector<NeverEndedJob> Profiler::never_ended_jobs() const {
  const size_t kept = std::min<std::uint64_t>(impl_->never_ended.load(), Impl::kNeverEndedKept);
  return {impl_->never_ended_jobs.begin(), impl_->never_ended_jobs.begin() + static_cast<std::ptrdiff_t>(kept)};
}

}  // namespace jobviz
