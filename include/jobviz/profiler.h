// libjobviz: records when each pipeline job really runs on its stream and
// writes the worker-log lines that `jobviz` draws (docs/runtime-shim.md).
//
//   jobviz::Profiler profiler({.global_rank = 3, .local_worker = 1, .world_size = 8});
//   profiler.BeginStep(step);
//   { jobviz::JobScope job(profiler, stream, "forward", job_id, micro_batch); launch_kernels(); }
//   profiler.EndStep();
//
// The launching thread only claims a preallocated record and enqueues two
// host callbacks; the callbacks only read the wall clock and store it; a
// background thread formats and writes the lines.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "jobviz/clock_sync.h"
#include "jobviz/profiler_config.h"
#include "jobviz/stream.h"

namespace jobviz {

// The largest micro-batch BeginJob takes: what jobviz draws (a larger one is
// refused and counted, as a negative one is).
inline constexpr std::int64_t kLargestMicroBatch = 2'147'483'647;

// Identifies one job between BeginJob and EndJob. Invalid when the job is
// not recorded (outside the window, or the buffer was full).
struct JobToken {
  std::uint64_t index = UINT64_MAX;
  bool valid() const { return index != UINT64_MAX; }
};

struct ProfilerStats {
  std::uint64_t jobs_recorded = 0;  // job lines written or to be written
  std::uint64_t records_lost = 0;   // dropped: a full buffer, a refused callback or barrier, a failed
                                    // write (full disk), a job whose end never ran before Shutdown,
                                    // a job never ended (below)
  std::uint64_t lines_written = 0;  // reached the log (flushed without error)
  std::uint64_t calls_refused = 0;  // BeginJob with a type that is not one word (\w+) or a
                                    // micro-batch outside 0 to kLargestMicroBatch; EndJob with a stale
                                    // token, a second time, or for a job already given up as never ended
  std::uint64_t jobs_never_ended = 0;  // begun, and EndJob never called (counted in records_lost too)
};

// A job begun and never ended (Profiler::never_ended_jobs()).
struct NeverEndedJob {
  char type[64] = {};
  std::int64_t job_id = 0, micro_batch = 0;
  std::int64_t start_ns = 0;  // when its start ran on the stream (ns since the epoch)
};

class Profiler {
 public:
  explicit Profiler(ProfilerConfig config = {});
  ~Profiler();  // Shutdown()
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  // Enqueues the start mark of a job on `stream`. `type` is one word, \w+
  // (forward, backward_b0, ...; anything else is refused and counted); ids as
  // the framework prints them.
  JobToken BeginJob(Stream& stream, std::string_view type, std::int64_t job_id, std::int64_t micro_batch);
  // Enqueues the end mark; call on the same stream (or one ordered after it),
  // once per token (a second call, or a token of a job already written, is
  // refused, counted, and false).
  bool EndJob(Stream& stream, JobToken token);

  // Step boundaries, on the launching thread: NVTX step lines (and real NVTX
  // ranges in CUDA builds). The window is checked here.
  void BeginStep(std::int64_t step);
  void EndStep();

  // Clock sync: `rounds` (default: config) times, a collective on `stream`
  // followed by a host callback that takes the time; writes "Clock Sync"
  // lines. Round numbers go on across calls. Every rank must call it the
  // same number of times (it is a collective).
  // With a host-side communicator (BarrierCommunicator) the stream is not
  // used: each round is the barrier, then the host time.
  void SyncClocks(Communicator& communicator, Stream& stream, int rounds = -1);
  void SyncClocks(BarrierCommunicator& communicator, int rounds = -1);
  // With a communicator attached, SyncClocks runs by itself when the
  // profiling window starts (first BeginStep inside it) and when it ends
  // (EndStep of step end-1). Without a window, only at the first step: call
  // SyncClocks at the end yourself. Detach (nullptrs) before the stream goes.
  // A host-side communicator needs no stream (nullptr).
  void AttachClockSync(Communicator* communicator, Stream* stream);

  // Writes the HybridParallelInfo line that tells jobviz this rank's stage,
  // replica and tensor-parallel index (ProfilerConfig::pp_rank). Once per
  // profiler: false (and nothing written) for a second call, a value outside
  // 0..999999 or a product past 10^7 ranks (ProfilerConfig), or after Shutdown.
  bool SetTopology(int pp_rank, int dp_rank, int tp_rank);

  // Changes the watchdog's wait (ProfilerConfig::stall_after_s); 0 turns it off.
  void SetStallAfter(double seconds);

  // Changes the profiling window (overrides the environment).
  void SetProfileWindow(std::int64_t start, std::int64_t end);
  bool recording() const { return recording_.load(std::memory_order_relaxed); }

  // Waits up to `timeout_ms` for jobs whose end was enqueued but has not run
  // yet, writes everything, then the final stats line. A job begun and never
  // ended is not waited for: it is given up, and reported in the log (one
  // line each, the first 16) and on stderr (`warn_on_stderr`). Later calls
  // record nothing; the stats stay readable.
  void Shutdown(int timeout_ms = 5000) { Shutdown(timeout_ms, true); }
  void Shutdown(int timeout_ms, bool warn_on_stderr);
  ProfilerStats stats() const;
  // The jobs given up as never ended so far, the first 16
  // (stats().jobs_never_ended counts them all). A job is given up at
  // Shutdown, or earlier when the records behind it would fill the buffer.
  std::vector<NeverEndedJob> never_ended_jobs() const;
  const ProfilerConfig& config() const { return config_; }

  struct Impl;

 private:
  void SyncClocksLocked(Communicator& communicator, Stream* stream, int rounds);
  ProfilerConfig config_;
  std::atomic<bool> recording_{true};
  std::unique_ptr<Impl> impl_;
};

// RAII: BeginJob in the constructor, EndJob in the destructor.
class JobScope {
 public:
  JobScope(Profiler& profiler, Stream& stream, std::string_view type, std::int64_t job_id,
           std::int64_t micro_batch)
      : profiler_(profiler), stream_(stream), token_(profiler.BeginJob(stream, type, job_id, micro_batch)) {}
  ~JobScope() { profiler_.EndJob(stream_, token_); }
  JobScope(const JobScope&) = delete;
  JobScope& operator=(const JobScope&) = delete;

 private:
  Profiler& profiler_;
  Stream& stream_;
  JobToken token_;
};

}  // namespace jobviz
