#include "shim_test_util.h"

#include <thread>

// Every shim test file is one namespace: they compile as one program, a unity build.
namespace shim_profiler_watchdog_test {

using namespace jobviz;
using namespace jobviz::shim_test;

namespace {

std::vector<LogRecord> InFlight(const WorkerLogScan& scan) {
  std::vector<LogRecord> open;
  for (const LogRecord& r : scan.records)
    if (r.kind == RecordKind::kInFlight) open.push_back(r);
  return open;
}

// Polls the log until `count` in-flight lines are in it (what a kill -9 would leave), or 5 s.
WorkerLogScan WaitForInFlight(const std::string& path, size_t count) {
  WorkerLogScan scan;
  for (int i = 0; i < 500; ++i) {
    scan = ScanOutput(path);
    if (InFlight(scan).size() >= count) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return scan;
}

}  // namespace

TEST_CASE("The watchdog writes and flushes a line for a job still running and one whose start never came") {
  const std::string path = TempLog();
  ProfilerConfig config = Config(path);
  config.stall_after_s = 0.05;
  config.flush_interval_ms = 5;
  Profiler profiler(config);
  CpuStream running_stream, blocked_stream;
  const std::int64_t before = NowNanos();
  // A job that starts and then hangs (a kernel that does not finish).
  const JobToken hung = profiler.BeginJob(running_stream, "backward", 7, 2);
  running_stream.EnqueueSleep(std::chrono::milliseconds(400));
  profiler.EndJob(running_stream, hung);
  // A job behind a stream blocked by earlier work: enqueued, not started.
  blocked_stream.EnqueueSleep(std::chrono::milliseconds(400));
  const JobToken waiting = profiler.BeginJob(blocked_stream, "forward", 8, 3);
  profiler.EndJob(blocked_stream, waiting);

  // Read while both are still in flight: the lines are already in the file.
  const WorkerLogScan scan = WaitForInFlight(path, 2);
  CHECK(scan.skipped.total() == 0);
  const auto open = InFlight(scan);
  REQUIRE(open.size() == 2);
  const LogRecord& still = open[0].started ? open[0] : open[1];
  const LogRecord& not_started = open[0].started ? open[1] : open[0];
  CHECK(still.started);
  CHECK(still.type == "backward");
  CHECK(still.job_id == "7");
  CHECK(still.micro_batch == 2);
  CHECK(still.start >= before);
  CHECK(still.end - still.start >= 50'000'000);  // waited at least stall_after
  CHECK_FALSE(not_started.started);
  CHECK(not_started.type == "forward");
  CHECK(not_started.micro_batch == 3);
  CHECK(Jobs(scan).empty());  // neither has ended yet
  running_stream.Synchronize();
  blocked_stream.Synchronize();
  profiler.Shutdown();
  // Afterwards both end; each was reported once.
  const WorkerLogScan done = ScanOutput(path);
  CHECK(Jobs(done).size() == 2);
  CHECK(InFlight(done).size() == 2);
  fs::remove(path);
}

TEST_CASE("stall_after 0 turns the watchdog off; the C API refuses a negative wait") {
  const std::string path = TempLog();
  ProfilerConfig config = Config(path);
  config.stall_after_s = 0;
  config.flush_interval_ms = 5;
  {
    Profiler profiler(config);
    CpuStream stream;
    const JobToken token = profiler.BeginJob(stream, "forward", 1, 0);
    stream.EnqueueSleep(std::chrono::milliseconds(100));
    profiler.EndJob(stream, token);
    stream.Synchronize();
  }
  CHECK(InFlight(ScanOutput(path)).empty());
  CHECK(Jobs(ScanOutput(path)).size() == 1);
  fs::remove(path);
  jobviz_profiler* p = nullptr;
  REQUIRE(jobviz_profiler_create(0, 0, 1, TempLog().c_str(), -1, -1, &p) == JOBVIZ_OK);
  CHECK(jobviz_set_stall_after(p, -1) == JOBVIZ_ERROR_INVALID_ARGUMENT);
  CHECK(jobviz_set_stall_after(p, 1.0 / 0.0) == JOBVIZ_ERROR_INVALID_ARGUMENT);
  CHECK(jobviz_set_stall_after(p, 0) == JOBVIZ_OK);
  CHECK(jobviz_set_stall_after(nullptr, 1) == JOBVIZ_ERROR_INVALID_ARGUMENT);
  jobviz_profiler_destroy(p);
}

}  // namespace shim_profiler_watchdog_test
