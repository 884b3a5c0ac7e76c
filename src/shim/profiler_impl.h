// Profiler internals shared by profiler.cc (the public API),
// profiler_open.cc, profiler_clock_sync.cc, profiler_writer.cc (the
// background writer) and profiler_watchdog.cc; the ring's records and the
// host callbacks that fill them are record_ring.h.
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
#include "record_ring.h"

namespace jobviz {

namespace profiler_detail {

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
