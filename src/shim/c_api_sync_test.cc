// The C API and clock sync of libjobviz.
#include "shim_test_util.h"

#include <algorithm>
#include <barrier>
#include <ctime>
#include <mutex>
#include <functional>
#include <thread>

// Every shim test file is one namespace: they compile as one program, a unity build.
namespace shim_c_api_sync_test {

using namespace jobviz;
using namespace jobviz::shim_test;

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


namespace {

// Runs `sync(profiler, rank)` on one thread per rank, each profiler with its
// own emulated clock offset; returns every rank's clock-sync times by round.
// The host clock the shim reads (CLOCK_REALTIME), in ns since the epoch.
std::int64_t WallNow() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::vector<std::map<std::int64_t, std::int64_t>> SyncOnThreads(
    const std::vector<std::int64_t>& offsets, const std::function<void(Profiler&, int)>& sync) {
  const int ranks = static_cast<int>(offsets.size());
  std::vector<std::string> paths;
  for (int r = 0; r < ranks; ++r) paths.push_back(TempLog());
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      ProfilerConfig config = Config(paths[r]);
      config.global_rank = r;
      config.emulated_clock_offset_ns = offsets[r];
      Profiler profiler(config);
      sync(profiler, r);
    });
  for (auto& t : threads) t.join();
  std::vector<std::map<std::int64_t, std::int64_t>> times;
  for (const auto& path : paths) {
    times.push_back(SyncTimes(ScanOutput(path)));
    fs::remove(path);
  }
  return times;
}

}  // namespace

TEST_CASE("Clock sync: every rank reads the same instant, each through its own clock") {
  const std::vector<std::int64_t> offsets = {0, 50'000'000, -20'000'000};  // emulated: +50 ms, -20 ms
  auto group = CpuCommunicator::CreateGroup(3);
  const std::int64_t started = WallNow();
  std::vector<std::int64_t> returned(3);
  const auto times = SyncOnThreads(offsets, [&](Profiler& profiler, int r) {
    CpuStream stream;
    stream.EnqueueSleep(std::chrono::milliseconds(5 * r));  // ranks arrive at different times
    profiler.SyncClocks(*group[r], stream);
    profiler.SyncClocks(*group[r], stream, 2);  // round numbers go on
    stream.Synchronize();
    returned[r] = WallNow();
  });
  for (int r = 0; r < 3; ++r) {
    REQUIRE(times[r].size() == 7);
    CHECK(times[r].rbegin()->first == 6);
    for (const auto& [round, t] : times[r]) {
      INFO("rank " << r << " round " << round);
      // Read after the last rank arrived (rank 2 slept 10 ms first), not on
      // arrival, and before its own stream was done: bounds that hold however
      // late a loaded machine wakes a thread.
      CHECK(t - offsets[r] >= started + 10'000'000);
      CHECK(t - offsets[r] <= returned[r]);
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

TEST_CASE("Barrier clock sync: any barrier, no stream, each rank reads its own clock right after it") {
  const std::vector<std::int64_t> offsets = {0, 30'000'000, -7'000'000};
  std::barrier barrier(3);  // what an application's barrier does (torch.distributed.barrier, MPI)
  std::mutex mutex;
  std::vector<std::vector<std::int64_t>> arrived(3), left(3);  // per rank, each barrier's times
  const auto times = SyncOnThreads(offsets, [&](Profiler& profiler, int r) {
    BarrierCommunicator communicator(
        [&] {
          const std::int64_t arrival = WallNow();
          barrier.arrive_and_wait();
          const std::int64_t leaving = WallNow();
          std::lock_guard lock(mutex);
          arrived[r].push_back(arrival);
          left[r].push_back(leaving);
          return true;
        },
        r, 3);
    std::this_thread::sleep_for(std::chrono::milliseconds(4 * r));  // ranks arrive at different times
    profiler.SyncClocks(communicator, 4);
  });
  for (int r = 0; r < 3; ++r) {
    REQUIRE(times[r].size() == 4);
    REQUIRE(arrived[r].size() == 4);
    size_t i = 0;
    for (const auto& [round, t] : times[r]) {
      INFO("rank " << r << " round " << round);
      // Read right after the barrier released everyone: after the last rank
      // arrived, not at this rank's own arrival; bounds that hold however
      // late a loaded machine wakes a thread.
      const std::int64_t last_arrival = std::max({arrived[0][i], arrived[1][i], arrived[2][i]});
      CHECK(t - offsets[r] >= last_arrival);
      CHECK(t - offsets[r] >= left[r][i]);
      if (i + 1 < arrived[r].size()) CHECK(t - offsets[r] <= arrived[r][i + 1]);
      ++i;
    }
  }
}

TEST_CASE("Barrier clock sync: a failing barrier loses its rounds and says so") {
  const std::string path = TempLog();
  ProfilerStats stats;
  {
    Profiler profiler(Config(path));
    int calls = 0;
    BarrierCommunicator communicator([&] { return ++calls % 2 == 1; }, 0, 1);  // every second one fails
    profiler.SyncClocks(communicator, 4);
    CHECK(calls == 4);
    profiler.Shutdown();
    stats = profiler.stats();
  }
  CHECK(stats.records_lost == 2);
  CHECK(SyncTimes(ScanOutput(path)).size() == 2);
  fs::remove(path);
}

TEST_CASE("Barrier clock sync attached without a stream, and through the C API") {
  const std::string path = TempLog();
  jobviz_profiler* profiler = nullptr;
  REQUIRE(jobviz_profiler_create_emulated(0, 0, 1, path.c_str(), 1, 2, 5'000'000, 0.0, &profiler) == JOBVIZ_OK);
  int calls = 0;
  auto barrier = [](void* user) {
    ++*static_cast<int*>(user);
    return 0;
  };
  jobviz_communicator* communicator = nullptr;
  CHECK(jobviz_communicator_create_barrier(nullptr, nullptr, 0, 1, &communicator) == JOBVIZ_ERROR_INVALID_ARGUMENT);
  CHECK(jobviz_communicator_create_barrier(barrier, &calls, 1, 1, &communicator) == JOBVIZ_ERROR_INVALID_ARGUMENT);
  REQUIRE(jobviz_communicator_create_barrier(barrier, &calls, 0, 1, &communicator) == JOBVIZ_OK);
  CHECK(jobviz_attach_clock_sync(profiler, communicator, nullptr) == JOBVIZ_OK);
  const std::int64_t before = NowNanos();
  for (int step = 0; step < 3; ++step) {
    CHECK(jobviz_step_begin(profiler, step) == JOBVIZ_OK);
    CHECK(jobviz_step_end(profiler) == JOBVIZ_OK);
  }
  CHECK(jobviz_sync_clocks(profiler, communicator, nullptr, 2) == JOBVIZ_OK);
  const std::int64_t after = NowNanos();
  CHECK(calls == 5 + 5 + 2);  // window start, window end, by hand
  jobviz_attach_clock_sync(profiler, nullptr, nullptr);
  jobviz_profiler_destroy(profiler);
  jobviz_communicator_destroy(communicator);
  const auto times = SyncTimes(ScanOutput(path));
  CHECK(times.size() == 12);
  // Taken on the emulated clock, 5 ms ahead of the real one.
  for (const auto& [round, t] : times) {
    CHECK(t >= before + 5'000'000);
    CHECK(t <= after + 5'000'000);
  }
  fs::remove(path);
}

}  // namespace shim_c_api_sync_test
