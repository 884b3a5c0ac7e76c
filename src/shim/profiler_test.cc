#include "shim_test_util.h"

// Every shim test file is one namespace: they compile as one program, a unity build.
namespace shim_profiler_test {

using namespace jobviz;
using namespace jobviz::shim_test;

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
    CHECK(profiler.stats().records_lost == 1);  // a word, but past the type table's length
    CHECK_FALSE(profiler.BeginJob(stream, "", 1, 0).valid());
    CHECK(profiler.stats().calls_refused == 1);
    CHECK_FALSE(profiler.BeginJob(stream, "forward", 1, kLargestMicroBatch + 1).valid());  // past what jobviz draws
    CHECK_FALSE(profiler.BeginJob(stream, "forward", 1, -1).valid());
    CHECK(profiler.stats().calls_refused == 3);
    JobScope job(profiler, stream, "recv_forward", 1, kLargestMicroBatch);
  }
  const auto jobs = Jobs(ScanOutput(path));
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].type == "recv_forward");
  CHECK(jobs[0].micro_batch == kLargestMicroBatch);
  fs::remove(path);
}


// Hostile use of the shim (found by stress programs, issue 11).

TEST_CASE("A job type that is not one word is refused and counted, never written") {
  const std::string path = TempLog();
  ProfilerStats stats;
  {
    Profiler profiler(Config(path));
    CpuStream stream;
    for (const char* bad : {"forward\nNVTX range push: 99, time: 1.0", "two words", "fwd-1", "b\xc3" "\xa4" "ck"})
      CHECK_FALSE(profiler.BeginJob(stream, bad, 1, 0).valid());
    { JobScope job(profiler, stream, "backward_w0_reduce", 2, 0); }
    stream.Synchronize();
    profiler.Shutdown();
    stats = profiler.stats();
  }
  CHECK(stats.calls_refused == 4);
  CHECK(stats.jobs_recorded == 1);
  const WorkerLogScan scan = ScanOutput(path);
  CHECK(Jobs(scan).size() == 1);
  for (const LogRecord& r : scan.records) CHECK(r.kind != RecordKind::kStepPush);  // nothing injected
  CHECK(scan.skipped.total() == 0);
  fs::remove(path);
}

TEST_CASE("Ending a job twice, or with a token of a slot reused since, is refused; later records keep their times") {
  const std::string path = TempLog();
  ProfilerStats stats;
  {
    ProfilerConfig config = Config(path);
    config.capacity = 4;  // slots are reused quickly
    Profiler profiler(config);
    CpuStream stream;
    const JobToken first = profiler.BeginJob(stream, "forward", 0, 0);
    profiler.EndJob(stream, first);
    profiler.EndJob(stream, first);  // twice
    stream.Synchronize();
    for (int i = 1; i <= 12; ++i) {  // the ring wraps: first's slot is claimed again
      JobScope job(profiler, stream, "forward", i, 0);
      stream.EnqueueSleep(std::chrono::microseconds(50));
      stream.Synchronize();
    }
    profiler.EndJob(stream, first);  // stale
    stream.Synchronize();
    profiler.Shutdown();
    stats = profiler.stats();
  }
  CHECK(stats.calls_refused == 2);
  const auto jobs = Jobs(ScanOutput(path));
  CHECK(jobs.size() + stats.records_lost == 13);  // a full 4-slot ring may drop some, and says so
  CHECK(jobs.size() == stats.jobs_recorded);
  for (const LogRecord& job : jobs) {
    CHECK(job.start > 0);
    CHECK(job.end >= job.start);
  }
  fs::remove(path);
}

TEST_CASE("Shutdown with a job still running reports it lost, and no wrapped-around count") {
  const std::string path = TempLog();
  CpuStream stream;  // outlives the profiler: its callback must not touch freed memory
  {
    Profiler profiler(Config(path));
    profiler.BeginStep(0);
    const JobToken job = profiler.BeginJob(stream, "forward", 1, 0);
    stream.EnqueueSleep(std::chrono::milliseconds(300));
    profiler.EndJob(stream, job);
    profiler.EndStep();
    profiler.Shutdown(10);
    const ProfilerStats stats = profiler.stats();
    CHECK(stats.jobs_recorded == 0);
    CHECK(stats.records_lost == 1);       // the job; the step's pop claimed after it is written
    CHECK(stats.jobs_never_ended == 0);   // its end was enqueued: it ran late, it was not forgotten
  }
  stream.Synchronize();  // the end callback runs now, into the ring left allocated
  const std::string log = ReadFile(path);
  CHECK(log.find("jobs recorded = 0, records lost = 1, calls refused = 0, jobs never ended = 0") != std::string::npos);
  CHECK(log.find("NVTX range pop") != std::string::npos);
  fs::remove(path);
}

TEST_CASE("SetProfileWindow after Shutdown does not switch recording back on") {
  Profiler profiler(Config(TempLog()));
  profiler.Shutdown();
  profiler.SetProfileWindow(-1, -1);
  CHECK_FALSE(profiler.recording());
  CpuStream stream;
  CHECK_FALSE(profiler.BeginJob(stream, "forward", 1, 0).valid());
  fs::remove(profiler.config().output_path);
}

TEST_CASE("Lines that a full disk refuses are counted lost, not written") {
  ProfilerStats stats;
  {
    Profiler profiler(Config("/dev/full"));  // every write fails with ENOSPC
    CpuStream stream;
    for (int i = 0; i < 20; ++i) {
      JobScope job(profiler, stream, "forward", i, 0);
    }
    stream.Synchronize();
    profiler.Shutdown();
    stats = profiler.stats();
  }
  CHECK(stats.lines_written == 0);
  CHECK(stats.records_lost >= 20);
}

TEST_CASE("The topology line is written once, parses back to the rank's place, and bad values are refused") {
  const std::string path = TempLog();
  {
    ProfilerConfig config;
    config.global_rank = 5;
    config.output_path = path;
    config.pp_rank = 2;
    config.dp_rank = 1;
    config.tp_rank = 1;
    Profiler profiler(config);
    CHECK_FALSE(profiler.SetTopology(0, 0, 0));  // once per profiler
  }
  const WorkerLogScan scan = ScanOutput(path);
  std::vector<LogRecord> places;
  for (const LogRecord& r : scan.records)
    if (r.kind == RecordKind::kShimTopology) places.push_back(r);
  REQUIRE(places.size() == 1);
  CHECK(places[0].rank == 5);
  CHECK(places[0].place.at(ParallelAxis::kPp) == 2);
  CHECK(places[0].place.at(ParallelAxis::kDp) == 1);
  CHECK(places[0].place.at(ParallelAxis::kMp) == 1);
  CHECK(scan.skipped.total() == 0);
  std::remove(path.c_str());

  ProfilerConfig bad;
  bad.output_path = TempLog();
  bad.pp_rank = 1'000'000;
  CHECK_THROWS_AS(Profiler(bad), std::invalid_argument);
  bad.pp_rank = 0;
  bad.tp_rank = -2;
  CHECK_THROWS_AS(Profiler(bad), std::invalid_argument);
  std::remove(bad.output_path.c_str());

  jobviz_profiler* c_profiler = nullptr;
  const std::string c_path = TempLog();
  REQUIRE(jobviz_profiler_create(0, 0, 1, c_path.c_str(), -1, -1, &c_profiler) == JOBVIZ_OK);
  CHECK(jobviz_set_topology(c_profiler, -1, 0, 0) == JOBVIZ_ERROR_INVALID_ARGUMENT);
  // Each below 10^6, but a job that holds them has 10^12 ranks: jobviz would skip the line.
  CHECK(jobviz_set_topology(c_profiler, 0, 999999, 999999) == JOBVIZ_ERROR_INVALID_ARGUMENT);
  CHECK(jobviz_set_topology(c_profiler, 1, 0, 3) == JOBVIZ_OK);
  CHECK(jobviz_set_topology(c_profiler, 1, 0, 3) == JOBVIZ_ERROR_INVALID_ARGUMENT);
  CHECK(jobviz_set_topology(nullptr, 1, 0, 3) == JOBVIZ_ERROR_INVALID_ARGUMENT);
  jobviz_profiler_destroy(c_profiler);
  CHECK(ReadFile(c_path).find("HybridParallelInfo: rank_id: 0, pp_rank: 1, dp_rank: 0, tp_rank: 3\n") != std::string::npos);
  std::remove(c_path.c_str());
}

// Issue 24: a forgotten EndJob.

TEST_CASE("A job begun and never ended holds back nothing: later jobs are written, Shutdown gives it up at once") {
  const std::string path = TempLog();
  ProfilerStats stats;
  std::vector<NeverEndedJob> never_ended;
  JobToken forgotten;
  {
    Profiler profiler(Config(path));
    CpuStream stream;
    forgotten = profiler.BeginJob(stream, "forward", 0, 0);
    { JobScope job(profiler, stream, "forward", 1, 1); }
    { JobScope job(profiler, stream, "backward", 2, 1); }
    stream.Synchronize();
    profiler.Shutdown(600'000);  // would wait ten minutes for the forgotten end (the test's timeout fails first)
    CHECK_FALSE(profiler.EndJob(stream, forgotten));  // given up: too late to end it
    stats = profiler.stats();
    never_ended = profiler.never_ended_jobs();
  }
  CHECK(stats.jobs_recorded == 2);
  CHECK(stats.records_lost == 1);
  CHECK(stats.jobs_never_ended == 1);
  CHECK(stats.calls_refused == 1);
  REQUIRE(never_ended.size() == 1);
  CHECK(std::string(never_ended[0].type) == "forward");
  CHECK(never_ended[0].micro_batch == 0);
  CHECK(never_ended[0].job_id == 0);
  CHECK(never_ended[0].start_ns > 0);
  const WorkerLogScan scan = ScanOutput(path);
  CHECK(scan.skipped.total() == 0);
  const auto jobs = Jobs(scan);
  REQUIRE(jobs.size() == stats.jobs_recorded);  // the stats are what the file holds
  CHECK(jobs[0].job_id == "1");
  CHECK(jobs[1].job_id == "2");
  const std::string log = ReadFile(path);
  CHECK(log.find("job never ended (no EndJob/end_job for it): type = forward, micro_batch_id = 0, job id = 0") !=
        std::string::npos);
  // The stats line comes at Shutdown, before the refused EndJob above.
  CHECK(log.find("jobs recorded = 2, records lost = 1, calls refused = 0, jobs never ended = 1") != std::string::npos);
  fs::remove(path);
}

TEST_CASE("Records behind a job never ended are written while it is open, and it is given up before the ring fills") {
  const std::string path = TempLog();
  ProfilerStats stats;
  {
    ProfilerConfig config = Config(path);
    config.capacity = 8;
    config.flush_interval_ms = 1;
    Profiler profiler(config);
    CpuStream stream;
    const JobToken open = profiler.BeginJob(stream, "forward", 0, 0);
    stream.Synchronize();  // its start ran
    for (int i = 1; i <= 40; ++i) {
      { JobScope job(profiler, stream, "forward", i, 0); }
      stream.Synchronize();
      // Wait for the writer rather than fill the 8 slots faster than it drains.
      while (profiler.stats().lines_written + profiler.stats().records_lost < static_cast<std::uint64_t>(i))
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    CHECK(profiler.stats().jobs_never_ended == 1);  // before Shutdown: the ring was half full behind it
    CHECK_FALSE(profiler.EndJob(stream, open));
    stream.Synchronize();
    profiler.Shutdown();
    stats = profiler.stats();
  }
  CHECK(stats.jobs_never_ended == 1);
  CHECK(stats.jobs_recorded == 40);
  CHECK(stats.records_lost == 1);
  CHECK(Jobs(ScanOutput(path)).size() == 40);
  fs::remove(path);
}

TEST_CASE("A negative micro-batch is refused: BeginJob counts it, the C API says INVALID_ARGUMENT") {
  const std::string path = TempLog();
  {
    Profiler profiler(Config(path));
    CpuStream stream;
    CHECK_FALSE(profiler.BeginJob(stream, "forward", 1, -1).valid());
    CHECK(profiler.stats().calls_refused == 1);
  }
  fs::remove(path);
  jobviz_profiler* profiler = nullptr;
  jobviz_stream* stream = nullptr;
  REQUIRE(jobviz_profiler_create(0, 0, 1, path.c_str(), -1, -1, &profiler) == JOBVIZ_OK);
  REQUIRE(jobviz_stream_create_cpu(&stream) == JOBVIZ_OK);
  jobviz_job job = 0;
  CHECK(jobviz_job_begin(profiler, stream, "forward pass", 1, 0, &job) == JOBVIZ_ERROR_INVALID_ARGUMENT);
  CHECK(job == JOBVIZ_NO_JOB);
  CHECK(jobviz_job_begin(profiler, stream, "forward", 1, -3, &job) == JOBVIZ_ERROR_INVALID_ARGUMENT);
  CHECK(jobviz_job_begin(profiler, stream, "forward", 1, 0, &job) == JOBVIZ_OK);
  CHECK(jobviz_job_end(profiler, stream, job) == JOBVIZ_OK);
  CHECK(jobviz_job_end(profiler, stream, job) == JOBVIZ_ERROR_INVALID_ARGUMENT);  // a second end
  CHECK(jobviz_job_end(profiler, stream, JOBVIZ_NO_JOB) == JOBVIZ_OK);             // nothing to end
  jobviz_job open = 0;
  REQUIRE(jobviz_job_begin(profiler, stream, "backward", 2, 4, &open) == JOBVIZ_OK);
  REQUIRE(jobviz_stream_synchronize(stream) == JOBVIZ_OK);
  CHECK(jobviz_profiler_shutdown(profiler, 1000, 0) == JOBVIZ_OK);
  jobviz_stats stats{};
  REQUIRE(jobviz_get_stats(profiler, &stats) == JOBVIZ_OK);  // still readable after shutdown
  CHECK(stats.jobs_recorded == 1);
  CHECK(stats.calls_refused == 3);
  CHECK(stats.jobs_never_ended == 1);
  CHECK(stats.records_lost == 1);
  jobviz_job_info info{};
  REQUIRE(jobviz_never_ended_job(profiler, 0, &info) == JOBVIZ_OK);
  CHECK(std::string(info.type) == "backward");
  CHECK(info.micro_batch == 4);
  CHECK(info.job_id == 2);
  CHECK(jobviz_never_ended_job(profiler, 1, &info) == JOBVIZ_ERROR_INVALID_ARGUMENT);
  jobviz_stream_destroy(stream);
  jobviz_profiler_destroy(profiler);
  fs::remove(path);
}

TEST_CASE("A second live profiler on the same log is told so, in the log; one after the first closed is not") {
  const std::string path = TempLog();
  {
    Profiler first(Config(path));
    ProfilerConfig config = Config(path);
    config.global_rank = 2;
    Profiler second(config);
  }
  CHECK(ReadFile(path).find("also being written by another live jobviz profiler") != std::string::npos);
  fs::remove(path);
  { Profiler first(Config(path)); }
  { Profiler again(Config(path)); }
  CHECK(ReadFile(path).find("also being written") == std::string::npos);
  fs::remove(path);
}

}  // namespace shim_profiler_test
