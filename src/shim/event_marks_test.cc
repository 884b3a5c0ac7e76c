// The profiler's CUDA-event path (event_clock.h) without a GPU: a stand-in
// event clock whose points the test completes by hand, on a CudaStream whose
// handle nothing dereferences.
#include "event_clock.h"
#include "shim_test_util.h"

#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>

// Every shim test file is one namespace: they compile as one program, a unity build.
namespace shim_event_marks_test {

using namespace jobviz;
using namespace jobviz::shim_test;

namespace {

class FakeEventClock : public EventClock {
 public:
  bool Record(void*, size_t slot) override {
    std::lock_guard<std::mutex> lock(mutex_);
    recorded_.push_back(slot);
    outcomes_.erase(slot);  // a slot recorded again is pending again
    return true;
  }
  Resolution Resolve(size_t slot, std::int64_t* host_ns) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = outcomes_.find(slot);
    if (it == outcomes_.end()) return Resolution::kPending;
    if (!it->second) return Resolution::kFailed;
    *host_ns = *it->second;
    return Resolution::kDone;
  }
  // The k-th point recorded (0: the first job's start, 1: its end, ...).
  size_t Slot(size_t k) {
    std::lock_guard<std::mutex> lock(mutex_);
    return recorded_.at(k);
  }
  size_t RecordedCount() {
    std::lock_guard<std::mutex> lock(mutex_);
    return recorded_.size();
  }
  void Pass(size_t k, std::int64_t host_ns) { Set(k, host_ns); }
  void Fail(size_t k) { Set(k, std::nullopt); }

 private:
  void Set(size_t k, std::optional<std::int64_t> outcome) {
    const size_t slot = Slot(k);
    std::lock_guard<std::mutex> lock(mutex_);
    outcomes_[slot] = outcome;
  }
  std::mutex mutex_;
  std::vector<size_t> recorded_;
  std::map<size_t, std::optional<std::int64_t>> outcomes_;
};

FakeEventClock* fake = nullptr;
int fakes_made = 0;

std::unique_ptr<EventClock> MakeFake(size_t) {
  auto clock = std::make_unique<FakeEventClock>();
  fake = clock.get();
  ++fakes_made;
  return clock;
}

// Installs the stand-in for one test.
struct FakeClockScope {
  FakeClockScope() { EventClock::SetFactoryForTesting(MakeFake); }
  ~FakeClockScope() {
    EventClock::SetFactoryForTesting(nullptr);
    fake = nullptr;
  }
};

void* const kFakeHandle = reinterpret_cast<void*>(0x1);  // never dereferenced by the stand-in

// Polls the log until `done(scan)` holds, or 5 s.
template <typename Done>
WorkerLogScan WaitFor(const std::string& path, Done done) {
  WorkerLogScan scan;
  for (int i = 0; i < 500; ++i) {
    scan = ScanOutput(path);
    if (done(scan)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return scan;
}

std::vector<LogRecord> InFlight(const WorkerLogScan& scan) {
  std::vector<LogRecord> open;
  for (const LogRecord& r : scan.records)
    if (r.kind == RecordKind::kInFlight) open.push_back(r);
  return open;
}

}  // namespace

TEST_CASE("On a CUDA stream each job mark is an event, and a job is written with the times its events resolve to") {
  FakeClockScope scope;
  const std::string path = TempLog();
  ProfilerConfig config = Config(path);
  config.flush_interval_ms = 5;
  Profiler profiler(config);
  REQUIRE(fake != nullptr);
  CudaStream stream(kFakeHandle);
  profiler.EndJob(stream, profiler.BeginJob(stream, "forward", 0, 0));
  profiler.EndJob(stream, profiler.BeginJob(stream, "backward", 1, 0));
  REQUIRE(fake->RecordedCount() == 4);  // no host callback: in a build without CUDA that would be refused and lost
  const std::int64_t t = NowNanos();
  fake->Pass(0, t + 1'000);
  fake->Pass(1, t + 501'234);
  fake->Pass(2, t + 600'000);  // the second job started; its end not passed yet

  WorkerLogScan scan = WaitFor(path, [](const WorkerLogScan& s) { return !Jobs(s).empty(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // a few more writer passes
  scan = ScanOutput(path);
  REQUIRE(Jobs(scan).size() == 1);
  CHECK(Jobs(scan)[0].start == t + 1'000);
  CHECK(Jobs(scan)[0].end == t + 501'234);

  fake->Pass(3, t + 900'000);
  scan = WaitFor(path, [](const WorkerLogScan& s) { return Jobs(s).size() == 2; });
  REQUIRE(Jobs(scan).size() == 2);
  CHECK(Jobs(scan)[1].type == "backward");
  CHECK(Jobs(scan)[1].start == t + 600'000);
  CHECK(Jobs(scan)[1].end == t + 900'000);
  profiler.Shutdown();
  CHECK(profiler.stats().jobs_recorded == 2);
  CHECK(profiler.stats().records_lost == 0);
}

TEST_CASE("An event-timed job the stream has not reached is 'not started'; one it has, 'still running'") {
  FakeClockScope scope;
  const std::string path = TempLog();
  ProfilerConfig config = Config(path);
  config.stall_after_s = 0.05;
  config.flush_interval_ms = 5;
  Profiler profiler(config);
  CudaStream stream(kFakeHandle);
  profiler.EndJob(stream, profiler.BeginJob(stream, "backward", 7, 2));  // started, hangs
  profiler.EndJob(stream, profiler.BeginJob(stream, "forward", 8, 3));   // queued behind it
  const std::int64_t started = NowNanos() - 1'000'000;
  fake->Pass(0, started);
  const WorkerLogScan scan = WaitFor(path, [](const WorkerLogScan& s) { return InFlight(s).size() == 2; });
  const auto open = InFlight(scan);
  REQUIRE(open.size() == 2);
  const LogRecord& still = open[0].started ? open[0] : open[1];
  const LogRecord& queued = open[0].started ? open[1] : open[0];
  CHECK(still.job_id == "7");
  CHECK(still.start == started);
  CHECK(queued.job_id == "8");
  CHECK_FALSE(queued.started);
  fake->Pass(1, started + 2'000'000);
  fake->Pass(2, started + 2'000'100);
  fake->Pass(3, started + 2'500'000);
  profiler.Shutdown();
  CHECK(Jobs(ScanOutput(path)).size() == 2);
  CHECK(profiler.stats().records_lost == 0);
}

TEST_CASE("A mark CUDA can no longer time is lost and counted, and Shutdown does not wait for it") {
  FakeClockScope scope;
  const std::string path = TempLog();
  Profiler profiler(Config(path));
  CudaStream stream(kFakeHandle);
  profiler.EndJob(stream, profiler.BeginJob(stream, "forward", 0, 0));
  profiler.EndJob(stream, profiler.BeginJob(stream, "forward", 1, 1));
  const std::int64_t t = NowNanos();
  fake->Fail(0);
  fake->Pass(2, t);
  fake->Pass(3, t + 1'000);
  profiler.Shutdown(60'000);  // returns once nothing is pending: the failed job is not waited for
  const auto jobs = Jobs(ScanOutput(path));
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].job_id == "1");
  CHECK(profiler.stats().jobs_recorded == 1);
  CHECK(profiler.stats().records_lost == 1);
}

TEST_CASE("Event times are shown on an emulated clock like callback times") {
  FakeClockScope scope;
  const std::string path = TempLog();
  ProfilerConfig config = Config(path);
  config.emulated_clock_offset_ns = 5'000'000;
  Profiler profiler(config);
  CudaStream stream(kFakeHandle);
  profiler.EndJob(stream, profiler.BeginJob(stream, "forward", 0, 0));
  const std::int64_t t = NowNanos();
  fake->Pass(0, t);
  fake->Pass(1, t + 1'000);
  profiler.Shutdown();
  const auto jobs = Jobs(ScanOutput(path));
  REQUIRE(jobs.size() == 1);
  // Drift 0: the offset alone (the model's start is the profiler's construction).
  CHECK(jobs[0].start == t + 5'000'000);
  CHECK(jobs[0].end == t + 5'001'000);
}

TEST_CASE("Host callbacks where asked for, and on CPU streams") {
  FakeClockScope scope;
  const int made = fakes_made;
  SECTION("ProfilerConfig::cuda_timing") {
    ProfilerConfig config = Config(TempLog());
    config.cuda_timing = ProfilerConfig::CudaTiming::kHostCallbacks;
    Profiler profiler(config);
    CHECK(fakes_made == made);
  }
  SECTION("JOBVIZ_CUDA_TIMING=callbacks") {
    setenv("JOBVIZ_CUDA_TIMING", "callbacks", 1);
    Profiler profiler(Config(TempLog()));
    unsetenv("JOBVIZ_CUDA_TIMING");
    CHECK(fakes_made == made);
  }
  SECTION("a CpuStream beside the event clock") {
    const std::string path = TempLog();
    Profiler profiler(Config(path));
    REQUIRE(fakes_made == made + 1);
    CpuStream stream;
    profiler.EndJob(stream, profiler.BeginJob(stream, "forward", 0, 0));
    stream.Synchronize();
    profiler.Shutdown();
    CHECK(fake->RecordedCount() == 0);
    CHECK(Jobs(ScanOutput(path)).size() == 1);
  }
}

}  // namespace shim_event_marks_test
