// The record ring and the background writer of the Profiler.
#include "profiler_impl.h"

namespace jobviz {

namespace {

// Rings left behind by profilers destroyed with callbacks outstanding; kept
// reachable from here (so leak checkers know it is on purpose), never freed.
std::mutex abandoned_mutex;
std::vector<std::vector<Record>>* abandoned_rings = nullptr;

}  // namespace

Profiler::Impl::~Impl() {
  if (lock_fd >= 0) close(lock_fd);
  // A stream may still hold a callback into the ring (a job whose end had not
  // run when Shutdown gave up waiting). Freeing the ring would let that
  // callback write into freed memory: keep it allocated instead, a bounded
  // leak of capacity x 64 bytes per such profiler, counted as lost records.
  if (!HasPendingRecords()) return;
  std::lock_guard<std::mutex> lock(abandoned_mutex);
  if (!abandoned_rings) abandoned_rings = new std::vector<std::vector<Record>>();
  abandoned_rings->reserve(abandoned_rings->size() + 1);
  abandoned_rings->push_back(std::move(ring));  // moves the buffer: callbacks' pointers stay valid
}

bool Profiler::Impl::HasPendingRecords() const { return read.load() != write.load(); }

bool Profiler::Impl::AwaitsCallback(const Record& record) const {
  if (record.state.load(std::memory_order_acquire) != kPending) return false;
  if (record.kind != RecordKind::kJob) return true;  // a sync point the stream has not reached
  return record.end_enqueued.load(std::memory_order_acquire) || record.start_ns.load(std::memory_order_acquire) == 0;
}

bool Profiler::Impl::AwaitsAnyCallback() const {
  for (std::uint64_t r = read.load(); r < write.load(); ++r)
    if (AwaitsCallback(ring[r & mask])) return true;
  return false;
}

bool Profiler::Impl::GiveUp(Record& record) {
  if (record.kind != RecordKind::kJob || record.state.load(std::memory_order_acquire) != kPending) return false;
  const std::int64_t start = record.start_ns.load(std::memory_order_acquire);
  if (start == 0) return false;  // the start callback may still write into the slot
  bool expected = false;
  // Whoever sets end_enqueued first wins: EndJob then refuses the token.
  if (!record.end_enqueued.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) return false;
  // GiveUp runs under the drain lock or after the writer stopped: one at a
  // time. The entry is filled before the count that shows it.
  const std::uint64_t n = never_ended.load(std::memory_order_relaxed);
  if (n < kNeverEndedKept) {
    NeverEndedJob& kept = never_ended_jobs[n];
    std::snprintf(kept.type, sizeof kept.type, "%s", types[record.type].data());
    kept.job_id = record.a;
    kept.micro_batch = record.b;
    kept.start_ns = start;
  }
  never_ended.store(n + 1, std::memory_order_release);
  lost.fetch_add(1, std::memory_order_relaxed);
  jobs.fetch_sub(1, std::memory_order_relaxed);
  if (n < kNeverEndedKept) {
    // Not "Profiler Info: Job": jobviz must not read it as a job line.
    char begun[32];
    FormatMillis(begun, sizeof begun, start);
    logger->warn("jobviz: job never ended (no EndJob/end_job for it): type = {}, micro_batch_id = {}, job id = {}, "
                 "begun at {}; its line is not written",
                 types[record.type].data(), record.b, record.a, begun);
  }
  record.state.store(kAbandoned, std::memory_order_release);
  return true;
}

int Profiler::Impl::InternType(std::string_view type) {
  const size_t count = type_count.load(std::memory_order_acquire);
  for (size_t i = 0; i < count; ++i)
    if (type == std::string_view(types[i].data())) return static_cast<int>(i);
  if (type.empty() || type.size() > kMaxTypeLength) return -1;
  std::lock_guard<std::mutex> lock(type_mutex);
  const size_t now = type_count.load(std::memory_order_relaxed);
  for (size_t i = count; i < now; ++i)
    if (type == std::string_view(types[i].data())) return static_cast<int>(i);
  if (now == kMaxTypes) return -1;
  std::memcpy(types[now].data(), type.data(), type.size());
  types[now][type.size()] = '\0';
  type_count.store(now + 1, std::memory_order_release);
  return static_cast<int>(now);
}

Record* Profiler::Impl::Claim(std::uint64_t* index) {
  std::uint64_t w = write.load(std::memory_order_relaxed);
  do {
    if (w - read.load(std::memory_order_acquire) > mask) {
      lost.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
  } while (!write.compare_exchange_weak(w, w + 1, std::memory_order_acq_rel, std::memory_order_relaxed));
  *index = w;
  Record* record = &ring[w & mask];
  record->claim.store(w, std::memory_order_release);
  record->end_enqueued.store(false, std::memory_order_relaxed);
  record->device_marks.store(0, std::memory_order_relaxed);
  record->clock = emulated_clock;
  record->start_ns.store(0, std::memory_order_relaxed);
  record->end_ns.store(0, std::memory_order_relaxed);
  return record;
}

void Profiler::Impl::AddMarker(RecordKind kind, std::int64_t a, std::int64_t b) {
  std::uint64_t index;
  Record* record = Claim(&index);
  if (!record) return;
  record->kind = kind;
  record->a = a;
  record->b = b;
  record->start_ns.store(ReadClock(*record), std::memory_order_relaxed);
  record->state.store(kPublished, std::memory_order_release);
}

void Profiler::Impl::HostSyncRound(Communicator& communicator, std::int64_t round) {
  std::uint64_t index;
  Record* record = Claim(&index);  // before the barrier, so the time is taken right after it
  // Every rank passes the barrier whether or not its record fits.
  const bool passed = communicator.HostBarrier();
  const std::int64_t now = record ? ReadClock(*record) : 0;
  if (!record) return;
  record->kind = RecordKind::kClockSync;
  record->a = rank;
  record->b = round;
  if (!passed) {
    lost.fetch_add(1, std::memory_order_relaxed);
    record->state.store(kAbandoned, std::memory_order_release);
    return;
  }
  record->start_ns.store(now, std::memory_order_relaxed);
  record->state.store(kPublished, std::memory_order_release);
}

void Profiler::Impl::WriteRecord(const Record& record) {
  char line[256], start[32], end[32];
  const std::int64_t start_ns = record.start_ns.load(std::memory_order_relaxed);
  FormatMillis(start, sizeof start, start_ns);
  switch (record.kind) {
    case RecordKind::kJob:
      FormatMillis(end, sizeof end, record.end_ns.load(std::memory_order_relaxed));
      std::snprintf(line, sizeof line,
                    "Profiler Info: Job (%lld), type = %s, micro_batch_id = %lld, "
                    "job_start_time = %s, job_end_time = %s",
                    static_cast<long long>(record.a), types[record.type].data(),
                    static_cast<long long>(record.b), start, end);
      break;
    case RecordKind::kStepPush:
      std::snprintf(line, sizeof line, "NVTX range push: %lld, time: %s", static_cast<long long>(record.a),
                    start);
      break;
    case RecordKind::kStepPop:
      std::snprintf(line, sizeof line, "NVTX range pop, time: %s", start);
      break;
    case RecordKind::kWindow:
      std::snprintf(line, sizeof line, "Schedule Profiler start at step %lld and end at step %lld",
                    static_cast<long long>(record.a), static_cast<long long>(record.b));
      break;
    case RecordKind::kClockSync:
      std::snprintf(line, sizeof line, "Clock Sync: rank = %lld, round = %lld, time = %s",
                    static_cast<long long>(record.a), static_cast<long long>(record.b), start);
      break;
  }
  logger->info(line);
}

// Writes published records in claim order. An open job (begun, its end not
// enqueued) does not stop the pass: the records behind it are written and
// marked, and their slots freed once the open job is; any other pending
// record stops it (kInOrder), so lines keep their order while the stream
// lags. An open job at the head is given up when the ring is half full.
// Returns how many slots were freed.
size_t Profiler::Impl::Drain(DrainMode mode) {
  std::lock_guard<std::mutex> lock(drain_mutex);
  ResolveDeviceMarks();
  size_t freed = 0, written = 0;
  const std::uint64_t errors_before = write_errors.load();
  const std::uint64_t w = write.load(std::memory_order_acquire);
  std::uint64_t r = read.load(std::memory_order_relaxed);
  bool at_head = true;  // every record before this one is freed
  for (std::uint64_t i = r; i < w; ++i) {
    Record& record = ring[i & mask];
    std::uint32_t state = record.state.load(std::memory_order_acquire);
    if (state == kPending) {
      const bool open_job = record.kind == RecordKind::kJob && !record.end_enqueued.load(std::memory_order_acquire);
      if (open_job && at_head && w - r > (mask + 1) / 2 && GiveUp(record)) {
        state = kAbandoned;
      } else if (open_job || mode == DrainMode::kEverything) {
        at_head = false;
        continue;
      } else {
        break;
      }
    }
    if (state == kPublished) {
      WriteRecord(record);
      ++written;
      state = kWritten;
      if (!at_head) record.state.store(kWritten, std::memory_order_relaxed);
    }
    if (at_head) {
      record.state.store(kPending, std::memory_order_relaxed);
      read.store(++r, std::memory_order_release);
      ++freed;
    }
  }
  if (written > 0) logger->flush();
  // A full disk fails the buffered writes at the latest on the flush: this
  // batch's lines did not reach the log; count them as lost, not written.
  if (write_errors.load() != errors_before) lost.fetch_add(written, std::memory_order_relaxed);
  else lines.fetch_add(written, std::memory_order_relaxed);
  return freed;
}

bool Profiler::Impl::Mark(Stream& stream, Record& record, std::uint64_t index, std::uint8_t which) {
  auto* cuda = event_clock ? dynamic_cast<CudaStream*>(&stream) : nullptr;
  if (!cuda) return stream.LaunchHostFunction(which == kStartEvent ? OnJobStart : OnJobEnd, &record);
  if (!event_clock->Record(cuda->handle(), 2 * (index & mask) + (which == kEndEvent))) return false;
  record.device_marks.fetch_or(which, std::memory_order_release);  // the writer may resolve it now
  return true;
}

void Profiler::Impl::ResolveDeviceMarks() {
  if (!event_clock) return;
  const std::uint64_t w = write.load(std::memory_order_acquire);
  for (std::uint64_t i = read.load(std::memory_order_relaxed); i < w; ++i) {
    Record& record = ring[i & mask];
    const std::uint8_t marks = record.device_marks.load(std::memory_order_acquire);
    if (marks == 0 || record.kind != RecordKind::kJob || record.state.load(std::memory_order_acquire) != kPending)
      continue;
    const size_t slot = 2 * (i & mask);
    std::int64_t t = 0;
    EventClock::Resolution resolution = EventClock::Resolution::kDone;
    if ((marks & kStartEvent) && record.start_ns.load(std::memory_order_relaxed) == 0) {
      resolution = event_clock->Resolve(slot, &t);
      if (resolution == EventClock::Resolution::kDone)
        record.start_ns.store(OnRecordClock(record, t), std::memory_order_release);
    }
    if (resolution == EventClock::Resolution::kDone && (marks & kEndEvent) &&
        record.start_ns.load(std::memory_order_relaxed) != 0) {
      resolution = event_clock->Resolve(slot + 1, &t);
      if (resolution == EventClock::Resolution::kDone) {
        record.end_ns.store(OnRecordClock(record, t), std::memory_order_relaxed);
        record.state.store(kPublished, std::memory_order_release);
      }
    }
    if (resolution == EventClock::Resolution::kFailed) {  // CUDA cannot time it any more: lost
      lost.fetch_add(1, std::memory_order_relaxed);
      jobs.fetch_sub(1, std::memory_order_relaxed);
      record.state.store(kAbandoned, std::memory_order_release);
    }
  }
}

void Profiler::Impl::WriterLoop() {
  std::unique_lock<std::mutex> lock(writer_mutex);
  while (!stopping) {
    writer_wake.wait_for(lock, std::chrono::milliseconds(flush_interval_ms));
    lock.unlock();
    Drain();
    WatchStalls();
    lock.lock();
  }
}

}  // namespace jobviz
