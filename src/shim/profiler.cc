// Profiler: the record ring, the host callbacks and the background writer.
//
// Records live in a ring preallocated at construction. The launching thread
// claims the next slot with one compare-and-swap (a full ring drops the
// record and counts it), fills it, and enqueues two host callbacks that only
// read CLOCK_REALTIME and store it; the end callback publishes the record.
// A writer thread takes published records in claim order, formats the lines
// and writes them through spdlog.
#include "jobviz/profiler.h"

#include <spdlog/logger.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <unistd.h>

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

#include "nvtx_ranges.h"

namespace jobviz {

namespace {

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
enum RecordState : std::uint32_t { kPending = 0, kPublished = 1, kAbandoned = 2 };

struct alignas(64) Record {
  std::atomic<std::uint32_t> state{kPending};
  RecordKind kind = RecordKind::kJob;
  std::uint16_t type = 0;
  std::int64_t a = 0, b = 0;  // job: id, micro-batch; step push: step; window: start, end; sync: rank, round
  const ClockModel* clock = nullptr;  // set when the clock is emulated
  std::atomic<std::int64_t> start_ns{0}, end_ns{0};
};

std::int64_t WallClockNanos() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t ReadClock(const Record& record) {
  const std::int64_t t = WallClockNanos();
  return record.clock ? record.clock->Read(t) : t;
}

// Host callbacks: no allocation, no lock, no I/O, no CUDA call.
void OnJobStart(void* argument) {
  Record* record = static_cast<Record*>(argument);
  record->start_ns.store(ReadClock(*record), std::memory_order_relaxed);
}
void OnJobEnd(void* argument) {
  Record* record = static_cast<Record*>(argument);
  record->end_ns.store(ReadClock(*record), std::memory_order_relaxed);
  record->state.store(kPublished, std::memory_order_release);
}
void OnSyncPoint(void* argument) {
  Record* record = static_cast<Record*>(argument);
  record->start_ns.store(ReadClock(*record), std::memory_order_relaxed);
  record->state.store(kPublished, std::memory_order_release);
}

std::int64_t EnvStep(const char* name) {
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

size_t RoundUpToPowerOfTwo(size_t n) {
  size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// "1697793307213.760986": the framework's millisecond format.
int FormatMillis(char* out, size_t size, std::int64_t ns) {
  return std::snprintf(out, size, "%lld.%06lld", static_cast<long long>(ns / 1'000'000),
                       static_cast<long long>(ns % 1'000'000));
}

}  // namespace

struct Profiler::Impl {
  static constexpr size_t kMaxTypes = 256;
  static constexpr size_t kMaxTypeLength = 63;

  std::vector<Record> ring;
  std::uint64_t mask = 0;
  std::atomic<std::uint64_t> write{0};  // next index to claim
  std::atomic<std::uint64_t> read{0};   // next index the writer takes
  std::atomic<std::uint64_t> lost{0}, jobs{0}, lines{0};

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

  std::shared_ptr<spdlog::logger> logger;
  std::mutex drain_mutex;  // the writer thread and Shutdown() both drain
  std::thread writer;
  std::mutex writer_mutex;
  std::condition_variable writer_wake;
  bool stopping = false;
  std::atomic<bool> shut_down{false};
  int flush_interval_ms = 20;

  int InternType(std::string_view type);
  Record* Claim(std::uint64_t* index);
  void AddMarker(RecordKind kind, std::int64_t a, std::int64_t b);
  void WriteRecord(const Record& record);
  size_t Drain();
  void WriterLoop();
};

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
  lines.fetch_add(1, std::memory_order_relaxed);
}

// Writes published records in claim order; stops at the first one whose
// job has not ended yet. Returns how many were taken.
size_t Profiler::Impl::Drain() {
  std::lock_guard<std::mutex> lock(drain_mutex);
  size_t taken = 0;
  std::uint64_t r = read.load(std::memory_order_relaxed);
  while (r < write.load(std::memory_order_acquire)) {
    Record& record = ring[r & mask];
    const std::uint32_t state = record.state.load(std::memory_order_acquire);
    if (state == kPending) break;
    if (state == kPublished) WriteRecord(record);
    record.state.store(kPending, std::memory_order_relaxed);
    read.store(++r, std::memory_order_release);
    ++taken;
  }
  if (taken > 0) logger->flush();
  return taken;
}

void Profiler::Impl::WriterLoop() {
  std::unique_lock<std::mutex> lock(writer_mutex);
  while (!stopping) {
    writer_wake.wait_for(lock, std::chrono::milliseconds(flush_interval_ms));
    lock.unlock();
    Drain();
    lock.lock();
  }
}

Profiler::Profiler(ProfilerConfig config) : config_(std::move(config)), impl_(std::make_unique<Impl>()) {
  if (config_.host_name.empty()) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    config_.host_name = host;
  }
  if (config_.profile_start < 0) config_.profile_start = EnvStep("JOBVIZ_PROFILE_START");
  if (config_.profile_end < 0) config_.profile_end = EnvStep("JOBVIZ_PROFILE_END");
  impl_->window_start = config_.profile_start;
  impl_->window_end = config_.profile_end;
  recording_.store(impl_->window_start < 0 && impl_->window_end < 0);

  const size_t capacity = RoundUpToPowerOfTwo(std::max<size_t>(config_.capacity, 2));
  impl_->ring = std::vector<Record>(capacity);
  impl_->mask = capacity - 1;
  impl_->flush_interval_ms = std::max(1, config_.flush_interval_ms);
  impl_->rank = config_.global_rank;
  if (config_.emulated_clock_offset_ns != 0 || config_.emulated_clock_drift_ppm != 0) {
    impl_->clock_model = {config_.emulated_clock_offset_ns, config_.emulated_clock_drift_ppm, WallClockNanos()};
    impl_->emulated_clock = &impl_->clock_model;
  }

  spdlog::sink_ptr sink;
  try {
    if (config_.output_path.empty()) sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    else sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(config_.output_path, false);
  } catch (const std::exception& e) {
    throw std::runtime_error("jobviz: cannot open " + config_.output_path + ": " + e.what());
  }
  impl_->logger = std::make_shared<spdlog::logger>("jobviz." + std::to_string(config_.global_rank), sink);
  // glog-style prefix, as the framework's own lines have.
  impl_->logger->set_pattern("%L%m%d %H:%M:%S.%f %5t jobviz_profiler.cc:1] %v");
  impl_->logger->info("jobviz profiler: rank = {}, local worker = {}, world size = {}, host = {}",
                      config_.global_rank, config_.local_worker, config_.world_size, config_.host_name);
  impl_->writer = std::thread([this] { impl_->WriterLoop(); });
}

Profiler::~Profiler() { Shutdown(); }

JobToken Profiler::BeginJob(Stream& stream, std::string_view type, std::int64_t job_id, std::int64_t micro_batch) {
  if (!recording_.load(std::memory_order_relaxed)) return {};
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
  if (!stream.LaunchHostFunction(OnJobStart, record)) {
    impl_->lost.fetch_add(1, std::memory_order_relaxed);
    record->state.store(kAbandoned, std::memory_order_release);
    return {};
  }
  impl_->jobs.fetch_add(1, std::memory_order_relaxed);
  return {index};
}

void Profiler::EndJob(Stream& stream, JobToken token) {
  if (!token.valid()) return;
  Record* record = &impl_->ring[token.index & impl_->mask];
  if (!stream.LaunchHostFunction(OnJobEnd, record)) {
    impl_->lost.fetch_add(1, std::memory_order_relaxed);
    impl_->jobs.fetch_sub(1, std::memory_order_relaxed);
    record->state.store(kAbandoned, std::memory_order_release);
  }
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
    SyncClocksLocked(*impl_->sync_communicator, *impl_->sync_stream, config_.clock_sync_rounds);
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
    SyncClocksLocked(*impl_->sync_communicator, *impl_->sync_stream, config_.clock_sync_rounds);
  }
}

void Profiler::SyncClocks(Communicator& communicator, Stream& stream, int rounds) {
  std::lock_guard<std::mutex> lock(impl_->step_mutex);
  if (impl_->shut_down.load()) return;
  SyncClocksLocked(communicator, stream, rounds < 0 ? config_.clock_sync_rounds : rounds);
}

void Profiler::SyncClocksLocked(Communicator& communicator, Stream& stream, int rounds) {
  for (int k = 0; k < rounds; ++k) {
    const std::int64_t round = impl_->next_round++;
    // The collective goes on the stream whether or not the record fits, so
    // every rank enqueues the same collectives.
    const bool enqueued = communicator.EnqueueCollective(stream);
    std::uint64_t index;
    Record* record = impl_->Claim(&index);
    if (!record) continue;
    record->kind = RecordKind::kClockSync;
    record->a = impl_->rank;
    record->b = round;
    if (!enqueued || !stream.LaunchHostFunction(OnSyncPoint, record)) {
      impl_->lost.fetch_add(1, std::memory_order_relaxed);
      record->state.store(kAbandoned, std::memory_order_release);
    }
  }
}

void Profiler::AttachClockSync(Communicator* communicator, Stream* stream) {
  std::lock_guard<std::mutex> lock(impl_->step_mutex);
  impl_->sync_communicator = communicator && stream ? communicator : nullptr;
  impl_->sync_stream = communicator && stream ? stream : nullptr;
}

void Profiler::SetProfileWindow(std::int64_t start, std::int64_t end) {
  std::lock_guard<std::mutex> lock(impl_->step_mutex);
  impl_->window_start = start;
  impl_->window_end = end;
  impl_->window_announced = false;
  recording_.store(start < 0 && end < 0);
}

void Profiler::Shutdown(int timeout_ms) {
  if (impl_->shut_down.exchange(true)) return;
  recording_.store(false);
  // Jobs already enqueued may still be running on their streams.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    impl_->Drain();
    if (impl_->read.load() == impl_->write.load() || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  {
    std::lock_guard<std::mutex> lock(impl_->writer_mutex);
    impl_->stopping = true;
  }
  impl_->writer_wake.notify_one();
  impl_->writer.join();
  impl_->Drain();
  const std::uint64_t unfinished = impl_->write.load() - impl_->read.load();
  impl_->lost.fetch_add(unfinished);
  const ProfilerStats s = stats();
  impl_->logger->info("Profiler Stats: rank = {}, jobs recorded = {}, records lost = {}", config_.global_rank,
                      s.jobs_recorded - unfinished, s.records_lost);
  impl_->logger->flush();
}

ProfilerStats Profiler::stats() const {
  return {impl_->jobs.load(), impl_->lost.load(), impl_->lines.load()};
}

}  // namespace jobviz
