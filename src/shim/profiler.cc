// Profiler: the public API (jobs, shutdown, statistics) over the record ring
// and writer of profiler_impl.h / profiler_writer.cc; made (its log opened,
// its header written) in profiler_open.cc; its steps and profiling window in
// profiler_steps.cc; its clock sync in profiler_clock_sync.cc.
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
  if (!IsWord(type) || micro_batch < 0 || micro_batch > kLargestMicroBatch) {
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
