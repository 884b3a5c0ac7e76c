#include "parse/log_jobs.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include <stdlib.h>
#include <unistd.h>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_log_jobs_test {

using namespace jobviz::log_jobs;

TEST_CASE("The C++17 view of a log gives the scan's job lines and in-flight lines, in file order") {
  char name[] = "/tmp/jobviz_log_jobs_XXXXXX";
  const int fd = mkstemp(name);
  REQUIRE(fd >= 0);
  close(fd);
  const std::string path = name;
  {
    std::ofstream out(path);
    out << "I1020 09:15:07.265326 22317 jobviz_profiler.cc:1] Profiler Info: Job (3), type = forward, "
           "micro_batch_id = 2, job_start_time = 1697793307213.760986, job_end_time = 1697793307254.006104\n"
        << "noise\n"
        << "Profiler Info: Job (4) still running, type = forward, micro_batch_id = 3, "
           "job_start_time = 1697793307260.000000, waited = 60.000 s\n"
        << "Profiler Info: Job (5) not started, type = backward, micro_batch_id = 3, "
           "enqueue_time = 1697793307261.500000, waited = 60.000 s\n"
        << "Profiler Info: Job (6), type = forward, micro_batch_id = oops\n";
  }
  const LogJobs log = ReadLogJobs(path);
  std::remove(path.c_str());
  CHECK(log.error.empty());
  CHECK(log.lines == 5);
  CHECK(log.skipped == 1);
  REQUIRE(log.jobs.size() == 3);
  const JobLine& done = log.jobs[0];
  CHECK(done.id == "3");
  CHECK(done.type == "forward");
  CHECK(done.micro_batch == 2);
  CHECK(done.start == 1'697'793'307'213'760'986);
  CHECK(done.end == 1'697'793'307'254'006'104);
  CHECK(done.line == 1);
  CHECK_FALSE(done.in_flight);
  const JobLine* running = FindJob(log, "4", "forward", true);
  REQUIRE(running);
  CHECK(running->started);
  CHECK(running->start == 1'697'793'307'260'000'000);
  CHECK(running->end == running->start + 60'000'000'000);  // when the watchdog saw it
  const JobLine* waiting = FindJob(log, "5", "backward", true);
  REQUIRE(waiting);
  CHECK_FALSE(waiting->started);
  CHECK(waiting->line == 4);
  CHECK(FindJob(log, "4", "forward") == nullptr);  // no finished line for it
}

TEST_CASE("A log that cannot be read says why") {
  const LogJobs log = ReadLogJobs("/nonexistent/workerlog.0");
  CHECK_FALSE(log.error.empty());
  CHECK(log.jobs.empty());
}

}  // namespace unit_log_jobs_test
