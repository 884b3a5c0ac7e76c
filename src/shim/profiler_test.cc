#include "jobviz/profiler.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <sstream>
#include <unistd.h>

#include "jobviz/jobviz.h"
#include "parse/workerlog_scan.h"

using namespace jobviz;
namespace fs = std::filesystem;

namespace {

std::string TempLog() {
  static int counter = 0;
  const fs::path path = fs::temp_directory_path() /
                        ("jobviz_shim_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + ".log");
  fs::remove(path);
  return path.string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The profiler's output read back by jobviz's own reader.
WorkerLogScan ScanOutput(const std::string& path) {
  static const LineParser parser;
  return ScanWorkerLogText(path, ReadFile(path), parser);
}

std::vector<LogRecord> Jobs(const WorkerLogScan& scan) {
  std::vector<LogRecord> jobs;
  for (const LogRecord& r : scan.records)
    if (r.kind == RecordKind::kJob) jobs.push_back(r);
  return jobs;
}

std::map<std::int64_t, std::int64_t> SyncTimes(const WorkerLogScan& scan) {
  std::map<std::int64_t, std::int64_t> times;  // round -> time
  for (const LogRecord& r : scan.records)
    if (r.kind == RecordKind::kClockSync) times[r.round] = r.start;
  return times;
}

ProfilerConfig Config(const std::string& path) {
  ProfilerConfig c;
  c.output_path = path;
  c.global_rank = 3;
  c.local_worker = 1;
  c.world_size = 4;
  return c;
}

std::int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

TEST_CASE("CpuStream runs a host function only after all work enqueued before it") {
  CpuStream stream;
  std::atomic<int> done{0};
  int seen_at_callback = -1;
  for (int i = 0; i < 5; ++i)
    stream.Enqueue([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      done.fetch_add(1);
    });
  struct Probe {
    std::atomic<int>* done;
    int* seen;
  } probe{&done, &seen_at_callback};
  REQUIRE(stream.LaunchHostFunction([](void* p) {
    auto* probe = static_cast<Probe*>(p);
    *probe->seen = probe->done->load();
  }, &probe));
  stream.Synchronize();
  CHECK(seen_at_callback == 5);
}

TEST_CASE("Job times come from the stream reaching the marks, and lines parse back to the same values") {
  const std::string path = TempLog();
  std::int64_t before = 0, after = 0;
  {
    Profiler profiler(Config(path));
    CpuStream stream;
    before = NowNanos();
    stream.EnqueueSleep(std::chrono::milliseconds(20));  // work already queued ahead of the job
    const JobToken token = profiler.BeginJob(stream, "backward_b1", 7, 3);
    stream.EnqueueSleep(std::chrono::milliseconds(10));
    profiler.EndJob(stream, token);
    stream.Synchronize();
    after = NowNanos();
  }
  const WorkerLogScan scan = ScanOutput(path);
  CHECK(scan.skipped.total() == 0);
  const auto jobs = Jobs(scan);
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].type == "backward_b1");
  CHECK(jobs[0].job_id == "7");
  CHECK(jobs[0].micro_batch == 3);
  CHECK(jobs[0].start >= before + 19'000'000);  // after the queued 20 ms
  CHECK(jobs[0].end - jobs[0].start >= 9'000'000);
  CHECK(jobs[0].end <= after);
  const std::string text = ReadFile(path);
  CHECK(text.find("Profiler Stats: rank = 3, jobs recorded = 1, records lost = 0") != std::string::npos);
  CHECK(text.find("jobviz profiler: rank = 3, local worker = 1, world size = 4") != std::string::npos);
  fs::remove(path);
}

TEST_CASE("Outside the profiling window nothing is recorded") {
  const std::string path = TempLog();
  {
    ProfilerConfig config = Config(path);
    config.profile_start = 2;
    config.profile_end = 4;
    Profiler profiler(config);
    CpuStream stream;
    CHECK_FALSE(profiler.recording());
    for (int step = 0; step < 6; ++step) {
      profiler.BeginStep(step);
      CHECK(profiler.recording() == (step >= 2 && step < 4));
      JobScope job(profiler, stream, "forward", step, 0);
      profiler.EndStep();
    }
    stream.Synchronize();
  }
  const WorkerLogScan scan = ScanOutput(path);
  std::vector<std::int64_t> job_ids, pushed, windows;
  for (const LogRecord& r : scan.records) {
    if (r.kind == RecordKind::kJob) job_ids.push_back(std::stoll(r.job_id));
    if (r.kind == RecordKind::kStepPush) pushed.push_back(r.step);
    if (r.kind == RecordKind::kProfilerWindow) windows.push_back(r.step * 100 + r.window_end_step);
  }
  CHECK(job_ids == std::vector<std::int64_t>{2, 3});
  CHECK(pushed == std::vector<std::int64_t>{2, 3});
  CHECK(windows == std::vector<std::int64_t>{204});
  fs::remove(path);
}

TEST_CASE("The window comes from the environment when the code leaves it unset") {
  const std::string path = TempLog();
  setenv("JOBVIZ_PROFILE_START", "5", 1);
  setenv("JOBVIZ_PROFILE_END", "7", 1);
  {
    Profiler profiler(Config(path));
    CHECK(profiler.config().profile_start == 5);
    CHECK(profiler.config().profile_end == 7);
    profiler.BeginStep(4);
    CHECK_FALSE(profiler.recording());
    profiler.BeginStep(5);
    CHECK(profiler.recording());
    profiler.SetProfileWindow(-1, -1);  // code overrides the environment
    CHECK(profiler.recording());
  }
  unsetenv("JOBVIZ_PROFILE_START");
  unsetenv("JOBVIZ_PROFILE_END");
  fs::remove(path);
}

TEST_CASE("Many threads and streams record every job exactly once") {
  const std::string path = TempLog();
  constexpr int kThreads = 8, kJobs = 2000;
  {
    ProfilerConfig config = Config(path);
    config.capacity = 1 << 15;
    Profiler profiler(config);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        CpuStream stream;
        const char* type = t % 2 ? "forward" : "backward";
        for (int j = 0; j < kJobs; ++j) {
          JobScope job(profiler, stream, type, t * kJobs + j, t);
        }
        stream.Synchronize();
      });
    for (auto& thread : threads) thread.join();
    CHECK(profiler.stats().records_lost == 0);
  }
  const auto jobs = Jobs(ScanOutput(path));
  REQUIRE(jobs.size() == kThreads * kJobs);
  std::map<std::int64_t, int> seen;
  for (const LogRecord& r : jobs) {
    ++seen[std::stoll(r.job_id)];
    CHECK(r.type == (r.micro_batch % 2 ? "forward" : "backward"));
    CHECK(r.end >= r.start);
  }
  CHECK(seen.size() == static_cast<size_t>(kThreads * kJobs));
  fs::remove(path);
}

TEST_CASE("A full buffer drops records, counts them, and says so in the final line") {
  const std::string path = TempLog();
  {
    ProfilerConfig config = Config(path);
    config.capacity = 16;
    Profiler profiler(config);
    CpuStream stream;
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    stream.Enqueue([released] { released.wait(); });  // the "GPU" is busy
    for (int j = 0; j < 100; ++j) {
      JobScope job(profiler, stream, "forward", j, 0);
    }
    CHECK(profiler.stats().records_lost == 84);
    release.set_value();
    stream.Synchronize();
  }
  const auto jobs = Jobs(ScanOutput(path));
  CHECK(jobs.size() == 16);
  CHECK(ReadFile(path).find("jobs recorded = 16, records lost = 84") != std::string::npos);
  fs::remove(path);
}

TEST_CASE("Shutdown writes everything even when the writer would wake much later") {
  const std::string path = TempLog();
  ProfilerConfig config = Config(path);
  config.flush_interval_ms = 60'000;
  Profiler profiler(config);
  CpuStream stream;
  profiler.BeginStep(0);
  for (int j = 0; j < 50; ++j) {
    JobScope job(profiler, stream, "optimizer", j, 0);
  }
  profiler.EndStep();
  stream.Synchronize();
  profiler.Shutdown();
  CHECK(Jobs(ScanOutput(path)).size() == 50);
  CHECK_FALSE(profiler.BeginJob(stream, "forward", 1, 0).valid());  // nothing after shutdown
  fs::remove(path);
}

TEST_CASE("Unusual job types and job types past the table's limits") {
  const std::string path = TempLog();
  {
    Profiler profiler(Config(path));
    CpuStream stream;
    CHECK_FALSE(profiler.BeginJob(stream, std::string(200, 'x'), 1, 0).valid());
    CHECK_FALSE(profiler.BeginJob(stream, "", 1, 0).valid());
    CHECK(profiler.stats().records_lost == 2);
    JobScope job(profiler, stream, "recv_forward", 1, 0);
  }
  const auto jobs = Jobs(ScanOutput(path));
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].type == "recv_forward");
  fs::remove(path);
}

TEST_CASE("C API: handles, status codes, and the same lines") {
  const std::string path = TempLog();
  jobviz_profiler* profiler = nullptr;
  jobviz_stream* stream = nullptr;
  CHECK(jobviz_profiler_create(-1, 0, 1, path.c_str(), -1, -1, &profiler) == JOBVIZ_ERROR_INVALID_ARGUMENT);
  const std::string not_a_directory = TempLog();
  std::ofstream(not_a_directory) << "a file\n";
  const std::string unopenable = not_a_directory + "/log";  // a path under a regular file
  CHECK(jobviz_profiler_create(0, 0, 1, unopenable.c_str(), -1, -1, &profiler) == JOBVIZ_ERROR_IO);
  fs::remove(not_a_directory);
  REQUIRE(jobviz_profiler_create(1, 1, 2, path.c_str(), -1, -1, &profiler) == JOBVIZ_OK);
  REQUIRE(jobviz_stream_create_cpu(&stream) == JOBVIZ_OK);
  jobviz_stream* cuda = nullptr;
  CHECK(jobviz_stream_wrap_cuda(nullptr, &cuda) == (IsCudaAvailable() ? JOBVIZ_OK : JOBVIZ_ERROR_NO_CUDA));
  jobviz_stream_destroy(cuda);
  CHECK(jobviz_step_begin(profiler, 0) == JOBVIZ_OK);
  jobviz_job job = JOBVIZ_NO_JOB;
  CHECK(jobviz_job_begin(profiler, stream, "forward", 0, 2, &job) == JOBVIZ_OK);
  CHECK(job != JOBVIZ_NO_JOB);
  CHECK(jobviz_cpu_stream_sleep(stream, 1000) == JOBVIZ_OK);
  CHECK(jobviz_job_end(profiler, stream, job) == JOBVIZ_OK);
  CHECK(jobviz_step_end(profiler) == JOBVIZ_OK);
  jobviz_communicator* group[1] = {nullptr};
  REQUIRE(jobviz_communicator_create_cpu_group(1, group) == JOBVIZ_OK);
  CHECK(jobviz_sync_clocks(profiler, group[0], stream, 3) == JOBVIZ_OK);
  CHECK(jobviz_sync_clocks(profiler, nullptr, stream, 3) == JOBVIZ_ERROR_INVALID_ARGUMENT);
  jobviz_communicator* nccl = nullptr;
  unsigned char id[JOBVIZ_NCCL_UNIQUE_ID_BYTES];
  CHECK(jobviz_communicator_create_nccl(id, 2, 2, &nccl) == JOBVIZ_ERROR_INVALID_ARGUMENT);  // rank >= size
  CHECK(jobviz_communicator_wrap_nccl(nullptr, &nccl) == JOBVIZ_ERROR_INVALID_ARGUMENT);
  CHECK(jobviz_set_profile_window(profiler, 5, 3) == JOBVIZ_ERROR_INVALID_ARGUMENT);
  CHECK(jobviz_job_begin(nullptr, stream, "forward", 0, 0, &job) == JOBVIZ_ERROR_INVALID_ARGUMENT);
  CHECK(jobviz_stream_synchronize(stream) == JOBVIZ_OK);
  CHECK(jobviz_records_lost(profiler) == 0);
  jobviz_profiler_destroy(profiler);
  jobviz_stream_destroy(stream);
  jobviz_communicator_destroy(group[0]);
  const WorkerLogScan scan = ScanOutput(path);
  const auto jobs = Jobs(scan);
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].micro_batch == 2);
  CHECK(SyncTimes(scan).size() == 3);
  CHECK(std::string(jobviz_status_string(JOBVIZ_ERROR_NO_CUDA)).find("without CUDA") != std::string::npos);
  fs::remove(path);
}


TEST_CASE("Clock sync: every rank reads the same instant, each through its own clock") {
  constexpr int kRanks = 3;
  const std::int64_t offsets[kRanks] = {0, 50'000'000, -20'000'000};  // emulated: +50 ms, -20 ms
  auto group = CpuCommunicator::CreateGroup(kRanks);
  std::vector<std::string> paths;
  for (int r = 0; r < kRanks; ++r) paths.push_back(TempLog());
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r)
    threads.emplace_back([&, r] {
      ProfilerConfig config = Config(paths[r]);
      config.global_rank = r;
      config.emulated_clock_offset_ns = offsets[r];
      Profiler profiler(config);
      CpuStream stream;
      stream.EnqueueSleep(std::chrono::milliseconds(5 * r));  // ranks arrive at different times
      profiler.SyncClocks(*group[r], stream);
      profiler.SyncClocks(*group[r], stream, 2);  // round numbers go on
      stream.Synchronize();
    });
  for (auto& t : threads) t.join();
  std::vector<std::map<std::int64_t, std::int64_t>> times;
  for (const auto& path : paths) {
    times.push_back(SyncTimes(ScanOutput(path)));
    fs::remove(path);
  }
  for (int r = 0; r < kRanks; ++r) {
    REQUIRE(times[r].size() == 7);
    CHECK(times[r].rbegin()->first == 6);
    for (const auto& [round, t] : times[r]) {
      const std::int64_t seen_offset = t - times[0].at(round);
      INFO("rank " << r << " round " << round);
      // The barrier releases everyone at once; a loaded machine may wake a thread late.
      CHECK(std::abs(seen_offset - offsets[r]) < 10'000'000);
    }
  }
}

TEST_CASE("Clock sync runs by itself at the start and the end of the profiling window") {
  const std::string path = TempLog();
  {
    auto group = CpuCommunicator::CreateGroup(1);
    ProfilerConfig config = Config(path);
    config.profile_start = 1;
    config.profile_end = 3;
    config.clock_sync_rounds = 4;
    Profiler profiler(config);
    CpuStream stream;
    profiler.AttachClockSync(group[0].get(), &stream);
    for (int step = 0; step < 5; ++step) {
      profiler.BeginStep(step);
      JobScope job(profiler, stream, "forward", step, 0);
      profiler.EndStep();
    }
    stream.Synchronize();
    profiler.AttachClockSync(nullptr, nullptr);
  }
  const WorkerLogScan scan = ScanOutput(path);
  std::vector<std::string> order;  // record kinds in file order
  for (const LogRecord& r : scan.records) {
    if (r.kind == RecordKind::kClockSync) order.push_back("sync" + std::to_string(r.round));
    if (r.kind == RecordKind::kStepPush) order.push_back("push" + std::to_string(r.step));
    if (r.kind == RecordKind::kStepPop) order.push_back("pop");
  }
  // The window line comes first; jobs are printed when they end, so leave them out.
  const std::vector<std::string> expected = {"sync0", "sync1", "sync2", "sync3", "push1", "pop", "push2", "pop",
                                             "sync4", "sync5", "sync6", "sync7"};
  CHECK(order == expected);
  fs::remove(path);
}

TEST_CASE("A CPU communicator refuses a stream it cannot wait on") {
  auto group = CpuCommunicator::CreateGroup(1);
  CudaStream not_cpu(nullptr);
  CHECK_FALSE(group[0]->EnqueueCollective(not_cpu));
  CHECK_FALSE(NcclCommunicator::Wrap(nullptr));  // without NCCL, or with a null communicator
}
