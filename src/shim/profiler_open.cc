// A Profiler made: its configuration checked and completed from the
// environment, its record ring sized, its log opened and locked (another
// live profiler on the same file is said, on stderr and in the log), its
// header line and topology line written, its writer thread started.
#include "profiler_impl.h"

#include <cerrno>
#include <stdexcept>

namespace jobviz {

namespace {

// A step number from the environment (JOBVIZ_PROFILE_START/END); -1: unset or not a number.
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

// As jobviz reads the topology line: each value 0..999999.
// Each coordinate below 1,000,000, and a job that holds them all (every
// axis at least coordinate + 1 wide) at most 10,000,000 ranks: what jobviz
// reads back (model/topology.h kMaxRanks), so the line is never skipped.
bool ValidTopology(int pp_rank, int dp_rank, int tp_rank) {
  constexpr int kLimit = 1'000'000;
  constexpr std::int64_t kMostRanks = 10'000'000;
  if (pp_rank < 0 || dp_rank < 0 || tp_rank < 0 || pp_rank >= kLimit || dp_rank >= kLimit || tp_rank >= kLimit)
    return false;
  const std::int64_t ranks = (std::int64_t{pp_rank} + 1) * (std::int64_t{dp_rank} + 1);
  return ranks <= kMostRanks && ranks * (std::int64_t{tp_rank} + 1) <= kMostRanks;
}

// An advisory lock on the log (flock: per open file, so a second profiler in
// the same process conflicts too). False when another live profiler holds
// it; a file system without locks counts as unshared.
bool LockLog(const std::string& path, int* fd) {
  *fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (*fd < 0) return true;
  return flock(*fd, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK;
}

ProfilerConfig::CudaTiming CudaTimingFromEnvironment(ProfilerConfig::CudaTiming configured) {
  const char* value = std::getenv("JOBVIZ_CUDA_TIMING");
  if (!value || !*value) return configured;
  if (std::string_view(value) == "events") return ProfilerConfig::CudaTiming::kDeviceEvents;
  if (std::string_view(value) == "callbacks") return ProfilerConfig::CudaTiming::kHostCallbacks;
  std::fprintf(stderr, "jobviz: ignoring JOBVIZ_CUDA_TIMING=%s (expected events or callbacks)\n", value);
  return configured;
}

}  // namespace

Profiler::Profiler(ProfilerConfig config) : config_(std::move(config)), impl_(std::make_unique<Impl>()) {
  // Checked before the writer thread starts: a constructor that throws later would leave it running.
  if (config_.pp_rank >= 0 && !ValidTopology(config_.pp_rank, config_.dp_rank, config_.tp_rank))
    throw std::invalid_argument(
        "jobviz: pp_rank, dp_rank and tp_rank must be 0..999999, and (pp_rank+1)(dp_rank+1)(tp_rank+1) at most "
        "10,000,000 ranks");
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
  SetStallAfter(config_.stall_after_s);
  impl_->rank = config_.global_rank;
  if (CudaTimingFromEnvironment(config_.cuda_timing) == ProfilerConfig::CudaTiming::kDeviceEvents)
    impl_->event_clock = EventClock::Make(2 * capacity);  // null without CUDA
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
  // After the sink: it creates missing parent directories.
  const bool shared_log = !config_.output_path.empty() && !LockLog(config_.output_path, &impl_->lock_fd);
  impl_->logger = std::make_shared<spdlog::logger>("jobviz." + std::to_string(config_.global_rank), sink);
  // glog-style prefix, as the framework's own lines have.
  impl_->logger->set_pattern("%L%m%d %H:%M:%S.%f %5t jobviz_profiler.cc:1] %v");
  // Writes that fail (a full disk) are counted, not printed per line.
  impl_->logger->set_error_handler([impl = impl_.get()](const std::string&) { impl->write_errors.fetch_add(1); });
  // jobviz reads the rank and the shared-log note back (parse/line_formats.cc).
  impl_->logger->info("jobviz profiler: rank = {}, local worker = {}, world size = {}, host = {}{}", config_.global_rank,
                      config_.local_worker, config_.world_size, config_.host_name,
                      shared_log ? ", log shared with another live jobviz profiler" : "");
  if (shared_log) {
    std::fprintf(stderr,
                 "jobviz: rank %d: %s is being written by another live jobviz profiler (two ranks given the same "
                 "log path?): the lines of both will be mixed in one file. Give each rank its own log.\n",
                 config_.global_rank, config_.output_path.c_str());
    impl_->logger->warn("jobviz: this log is also being written by another live jobviz profiler");
  }
  impl_->writer = std::thread([this] { impl_->WriterLoop(); });
  if (config_.pp_rank >= 0) SetTopology(config_.pp_rank, config_.dp_rank, config_.tp_rank);  // checked above
}

bool Profiler::SetTopology(int pp_rank, int dp_rank, int tp_rank) {
  if (!ValidTopology(pp_rank, dp_rank, tp_rank)) return false;
  if (impl_->shut_down.load() || impl_->topology_written.exchange(true)) return false;
  // Paddle's own line, with coordinates instead of groups (docs/workerlog-format.md).
  impl_->logger->info("HybridParallelInfo: rank_id: {}, pp_rank: {}, dp_rank: {}, tp_rank: {}", config_.global_rank,
                      pp_rank, dp_rank, tp_rank);
  return true;
}

Profiler::~Profiler() { Shutdown(); }

}  // namespace jobviz
