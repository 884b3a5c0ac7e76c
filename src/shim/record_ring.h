// The profiler's record ring (profiler_impl.h holds the ring itself):
// Records live in a ring preallocated at construction. The launching thread
// claims the next slot with one compare-and-swap (a full ring drops the
// record and counts it), fills it, and enqueues two host callbacks that only
// read CLOCK_REALTIME and store it; the end callback publishes the record.
// On a CUDA stream the two marks are CUDA events instead (event_clock.h,
// ProfilerConfig::cuda_timing), and the writer thread stores their times
// and publishes the record once the stream has passed them.
// A writer thread takes published records in claim order, formats the lines
// and writes them through spdlog. A job whose end has not been enqueued yet
// (still open on the launching thread, or forgotten) does not hold back the
// records behind it: they are written past it, and it is written when it
// ends, or given up (reported as never ended) when it would fill the ring or
// at Shutdown.
#pragma once

#include <atomic>
#include <cstdint>
#include <ctime>

namespace jobviz::profiler_detail {

enum class RecordKind : std::uint8_t { kJob, kStepPush, kStepPop, kWindow, kClockSync };

// The host clock, or an emulated wrong one (tests, the demo).
struct ClockModel {
  std::int64_t offset_ns = 0;
  double drift_ppm = 0;
  std::int64_t start_ns = 0;
  std::int64_t Read(std::int64_t t) const {
    return t + offset_ns + static_cast<std::int64_t>(static_cast<double>(t - start_ns) * drift_ppm * 1e-6);
  }
};
// kWritten: written past an open job ahead of it; the slot is freed when the
// read index reaches it.
enum RecordState : std::uint32_t { kPending = 0, kPublished = 1, kAbandoned = 2, kWritten = 3 };

struct alignas(64) Record {
  std::atomic<std::uint32_t> state{kPending};
  // The claim index this slot holds now (its generation), and whether its
  // job's end was enqueued: EndJob refuses a stale token or a second end.
  std::atomic<std::uint64_t> claim{UINT64_MAX};
  std::atomic<bool> end_enqueued{false};
  // Which marks are CUDA events the writer resolves (kStartEvent, kEndEvent),
  // set once each event is recorded.
  std::atomic<std::uint8_t> device_marks{0};
  RecordKind kind = RecordKind::kJob;
  std::uint16_t type = 0;
  std::int64_t a = 0, b = 0;  // job: id, micro-batch; step push: step; window: start, end; sync: rank, round
  const ClockModel* clock = nullptr;  // set when the clock is emulated
  std::atomic<std::int64_t> start_ns{0}, end_ns{0};
};

inline std::int64_t WallClockNanos() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// A host clock reading as the record's (maybe emulated) clock shows it.
inline std::int64_t OnRecordClock(const Record& record, std::int64_t t) {
  return record.clock ? record.clock->Read(t) : t;
}
inline std::int64_t ReadClock(const Record& record) { return OnRecordClock(record, WallClockNanos()); }

constexpr std::uint8_t kStartEvent = 1, kEndEvent = 2;

// Host callbacks: no allocation, no lock, no I/O, no CUDA call.
inline void OnJobStart(void* argument) {
  Record* record = static_cast<Record*>(argument);
  // Release: the watchdog that sees the start sees the job's fields.
  record->start_ns.store(ReadClock(*record), std::memory_order_release);
}
inline void OnJobEnd(void* argument) {
  Record* record = static_cast<Record*>(argument);
  record->end_ns.store(ReadClock(*record), std::memory_order_relaxed);
  record->state.store(kPublished, std::memory_order_release);
}
inline void OnSyncPoint(void* argument) {
  Record* record = static_cast<Record*>(argument);
  record->start_ns.store(ReadClock(*record), std::memory_order_relaxed);
  record->state.store(kPublished, std::memory_order_release);
}

}  // namespace jobviz::profiler_detail
