// Profiler internals shared by profiler.cc (the public API) and
// profiler_writer.cc (the ring and the background writer).
//
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

#include "jobviz/profiler.h"

#include <spdlog/logger.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "event_clock.h"
#include "nvtx_ranges.h"

namespace jobviz {

namespace profiler_detail {

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

inline std::int64_t EnvStep(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) return -1;
  char* end = nullptr;
  const long long step = std::strtoll(value, &end, 10);
  if (*end != '\0' || step < 0) {
    std::fprintf(stderr, "jobviz: ignoring %s=%s (expected a step number)\n", name, value);
    return -1;
  }
  return step;
}

inline size_t RoundUpToPowerOfTwo(size_t n) {
  size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// "1697793307213.760986": the framework's millisecond format.
inline int FormatMillis(char* out, size_t size, std::int64_t ns) {
  return std::snprintf(out, size, "%lld.%06lld", static_cast<long long>(ns / 1'000'000),
                       static_cast<long long>(ns % 1'000'000));
}

}  // namespace profiler_detail

using namespace profiler_detail;

struct Profiler::Impl {
  static constexpr size_t kMaxTypes = 256;
  static constexpr size_t kMaxTypeLength = 63;

  std::vector<Record> ring;
  std::uint64_t mask = 0;
  std::atomic<std::uint64_t> write{0};  // next index to claim
  std::atomic<std::uint64_t> read{0};   // next index the writer takes
  std::atomic<std::uint64_t> lost{0}, jobs{0}, lines{0}, refused{0};
  std::atomic<std::uint64_t> write_errors{0};  // spdlog's error handler counts them

  // Job types, interned so a record holds a small number, not a string.
  std::array<std::array<char, kMaxTypeLength + 1>, kMaxTypes> types{};
  std::atomic<size_t> type_count{0};
  std::mutex type_mutex;

  // Window and step state: touched by the launching thread(s) only.
  std::mutex step_mutex;
  std::int64_t window_start = -1, window_end = -1;
  bool window_announced = false, step_open = false;
  std::int64_t current_step = -1;
  Communicator* sync_communicator = nullptr;
  Stream* sync_stream = nullptr;
  bool sync_started = false, sync_finished = false;
  std::int64_t next_round = 0;
  int rank = 0;

  ClockModel clock_model;
  const ClockModel* emulated_clock = nullptr;

  // CUDA streams' marks as events (null: host callbacks); two slots per ring
  // record, 2i for the start and 2i + 1 for the end.
  std::unique_ptr<EventClock> event_clock;
  // Enqueues a job's start or end mark on `stream`: a CUDA event where the
  // event clock runs and the stream is a CUDA stream, else a host callback.
  bool Mark(Stream& stream, Record& record, std::uint64_t index, std::uint8_t which);
  // Writer thread, under the drain lock: stores the times of the events the
  // streams have passed and publishes the jobs whose end was among them.
  void ResolveDeviceMarks();

  std::atomic<bool> topology_written{false};  // SetTopology: once
  int lock_fd = -1;  // holds an advisory lock (flock) on the log while the profiler lives
  std::shared_ptr<spdlog::logger> logger;
  std::mutex drain_mutex;  // the writer thread and Shutdown() both drain
  std::thread writer;
  std::mutex writer_mutex;
  std::condition_variable writer_wake;
  bool stopping = false;
  std::atomic<bool> shut_down{false};
  int flush_interval_ms = 20;

  // Jobs given up as never ended: how many, and the first few.
  static constexpr size_t kNeverEndedKept = 16;
  std::atomic<std::uint64_t> never_ended{0};
  std::array<NeverEndedJob, kNeverEndedKept> never_ended_jobs{};

  // The watchdog (profiler_watchdog.cc), run by the writer thread after each
  // drain: jobs pending longer than stall_after_ns get an in-flight line.
  std::atomic<std::int64_t> stall_after_ns{60'000'000'000};
  // Of the oldest records (at most 256): when each not-started job was first
  // seen pending, and which were reported. Touched by the writer thread only.
  std::vector<std::pair<std::uint64_t, std::int64_t>> watch_first_seen;  // (claim index, first seen)
  std::vector<std::uint64_t> watch_reported;                          // claim indices, sorted
  void WatchStalls();

  ~Impl();
  int InternType(std::string_view type);
  // Records whose callbacks may still run (after Shutdown's timeout).
  bool HasPendingRecords() const;
  // A record some callback will still publish: an enqueued end, a start or
  // sync point the stream has not reached. Open jobs whose start ran are not.
  bool AwaitsCallback(const Record& record) const;
  bool AwaitsAnyCallback() const;
  // Gives up a job that was begun and whose end was never enqueued (its
  // start ran): counted lost and never ended, reported in the log; a later
  // EndJob with its token is refused. False when its end was enqueued
  // meanwhile, or its start has not run.
  bool GiveUp(Record& record);
  Record* Claim(std::uint64_t* index);
  void AddMarker(RecordKind kind, std::int64_t a, std::int64_t b);
  // One round with a host-side communicator: the barrier, then the time.
  void HostSyncRound(Communicator& communicator, std::int64_t round);
  void WriteRecord(const Record& record);
  // kInOrder: records in claim order, past open jobs only; kEverything: every
  // published record, past anything still pending (Shutdown's last pass).
  enum class DrainMode { kInOrder, kEverything };
  size_t Drain(DrainMode mode = DrainMode::kInOrder);
  void WriterLoop();
};

}  // namespace jobviz
