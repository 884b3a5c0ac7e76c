// jobviz-bench-shim: host cost of marking job boundaries on the launching
// thread (the budget is 1 us per boundary).
//
// Three measurements, each over N jobs (2N boundaries), best of 5 rounds:
//  - profiler only: a stream that just stores the callback (what the
//    profiler itself costs: type lookup, slot claim, record fill);
//  - profiler + CpuStream, with the stream busy (as a GPU stream is while
//    the training loop runs ahead of it);
//  - outside the profiling window (should cost next to nothing).
// With CUDA the enqueue itself is cudaLaunchHostFunc, measured on a GPU.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <thread>
#include <vector>

#include "jobviz/profiler.h"

namespace {

using Clock = std::chrono::steady_clock;

// Stores callbacks in a preallocated array and runs them later, off the clock.
class RecordingStream : public jobviz::Stream {
 public:
  explicit RecordingStream(size_t capacity) { calls_.reserve(capacity); }
  bool LaunchHostFunction(jobviz::HostFunction function, void* argument) override {
    calls_.push_back({function, argument});
    return true;
  }
  void RunAll() {
    for (auto& [function, argument] : calls_) function(argument);
    calls_.clear();
  }

 private:
  std::vector<std::pair<jobviz::HostFunction, void*>> calls_;
};

constexpr int kJobs = 100'000;
constexpr int kRounds = 5;

// `before` runs off the clock ahead of each round.
template <typename Body, typename Before = void (*)(int)>
double BestNanosPerBoundary(Body&& body, Before&& before = [](int) {}) {
  double best = 1e300;
  for (int round = 0; round < kRounds; ++round) {
    before(round);
    const auto start = Clock::now();
    body();
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
    best = std::min(best, ns / (2.0 * kJobs));
  }
  return best;
}

// Off the clock before each round: let the writer catch up, so every round
// records all of its jobs.
auto WriterCaughtUp(jobviz::Profiler& profiler) {
  return [&profiler](int round) {
    while (profiler.stats().lines_written < static_cast<std::uint64_t>(round) * kJobs)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  };
}

bool NothingLost(const jobviz::Profiler& profiler) {
  if (profiler.stats().records_lost == 0) return true;
  std::fprintf(stderr, "records were lost: the figure is not valid\n");
  return false;
}

jobviz::ProfilerConfig Config() {
  jobviz::ProfilerConfig config;
  config.output_path = "/dev/null";
  config.capacity = 1 << 18;
  return config;
}

}  // namespace

int main() {
  const char* types[] = {"forward", "backward", "optimizer"};
  double profiler_only, with_cpu_stream, outside_window;
  {
    jobviz::Profiler profiler(Config());
    RecordingStream stream(2 * kJobs);
    profiler_only = BestNanosPerBoundary([&] {
      for (int j = 0; j < kJobs; ++j) {
        const auto token = profiler.BeginJob(stream, types[j % 3], j, j % 8);
        profiler.EndJob(stream, token);
      }
      stream.RunAll();
    }, WriterCaughtUp(profiler));
    if (!NothingLost(profiler)) return 1;
  }
  {
    jobviz::Profiler profiler(Config());
    jobviz::CpuStream stream;
    with_cpu_stream = BestNanosPerBoundary([&] {
      std::promise<void> go;
      std::shared_future<void> started = go.get_future().share();
      stream.Enqueue([started] { started.wait(); });  // keep the stream busy while launching
      for (int j = 0; j < kJobs; ++j) {
        const auto token = profiler.BeginJob(stream, types[j % 3], j, j % 8);
        profiler.EndJob(stream, token);
      }
      go.set_value();
      stream.Synchronize();
    }, WriterCaughtUp(profiler));
    if (!NothingLost(profiler)) return 1;
  }
  {
    jobviz::ProfilerConfig config = Config();
    config.profile_start = 10;
    config.profile_end = 20;
    jobviz::Profiler profiler(config);
    RecordingStream stream(16);
    profiler.BeginStep(0);
    outside_window = BestNanosPerBoundary([&] {
      for (int j = 0; j < kJobs; ++j) {
        const auto token = profiler.BeginJob(stream, types[j % 3], j, j % 8);
        profiler.EndJob(stream, token);
      }
    });
  }
  std::printf("jobviz shim host cost per job boundary (%d jobs, best of %d):\n", kJobs, kRounds);
  std::printf("  profiler only (recording stream)   %7.1f ns\n", profiler_only);
  std::printf("  profiler + CpuStream (busy stream) %7.1f ns\n", with_cpu_stream);
  std::printf("  outside the profiling window       %7.1f ns\n", outside_window);
  return 0;
}
