// The watchdog: a job begun and not ended after stall_after, or enqueued
// and never begun, gets a line written and flushed at once. Paddle and the
// shim write a job's line when it ends, so without it the job a rank hangs
// in never shows; jobviz reads these lines (docs/workerlog-format.md) and
// the stop report names the job (docs/analysis.md, "Where the run stopped").
// Runs on the writer thread only: nothing is added to the launching thread
// or to the host callbacks.
#include "profiler_impl.h"

namespace jobviz {

namespace {

bool Contains(const std::vector<std::uint64_t>& sorted, std::uint64_t index) {
  return std::binary_search(sorted.begin(), sorted.end(), index);
}

}  // namespace

// The oldest records only: a hung job holds the ring's read index, so it is
// among them, and a wake of the writer stays a few microseconds however
// many records are in flight.
constexpr std::uint64_t kWatchWindow = 256;

void Profiler::Impl::WatchStalls() {
  const std::int64_t stall = stall_after_ns.load(std::memory_order_relaxed);
  if (stall <= 0) return;
  std::lock_guard<std::mutex> lock(drain_mutex);
  const std::uint64_t r = read.load(std::memory_order_acquire), w = write.load(std::memory_order_acquire);
  // Forget what the ring has freed.
  std::erase_if(watch_first_seen, [&](const auto& seen) { return seen.first < r; });
  std::erase_if(watch_reported, [&](std::uint64_t index) { return index < r; });
  const std::int64_t now = emulated_clock ? emulated_clock->Read(WallClockNanos()) : WallClockNanos();
  bool wrote = false;
  for (std::uint64_t i = r; i < w && i < r + kWatchWindow; ++i) {
    Record& record = ring[i & mask];
    if (record.claim.load(std::memory_order_acquire) != i || record.kind != RecordKind::kJob ||
        record.state.load(std::memory_order_acquire) != kPending || Contains(watch_reported, i))
      continue;
    const std::int64_t start = record.start_ns.load(std::memory_order_acquire);
    std::int64_t since = start;
    if (start == 0) {  // its start has not run: the stream is busy, or blocked
      auto it = std::find_if(watch_first_seen.begin(), watch_first_seen.end(), [&](const auto& s) { return s.first == i; });
      if (it == watch_first_seen.end()) {
        watch_first_seen.emplace_back(i, now);
        continue;
      }
      since = it->second;
    }
    if (now - since < stall) continue;
    char line[256], at[32];
    FormatMillis(at, sizeof at, since);
    const std::int64_t waited_ms = (now - since) / 1'000'000;
    std::snprintf(line, sizeof line,
                  "Profiler Info: Job (%lld) %s, type = %s, micro_batch_id = %lld, %s = %s, waited = %lld.%03lld s",
                  static_cast<long long>(record.a), start != 0 ? "still running" : "not started", types[record.type].data(),
                  static_cast<long long>(record.b), start != 0 ? "job_start_time" : "enqueue_time", at,
                  static_cast<long long>(waited_ms / 1000), static_cast<long long>(waited_ms % 1000));
    logger->warn(line);
    watch_reported.insert(std::upper_bound(watch_reported.begin(), watch_reported.end(), i), i);
    wrote = true;
  }
  if (wrote) logger->flush();  // a kill -9 right after loses nothing
}

}  // namespace jobviz
