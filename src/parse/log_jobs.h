// The job lines of one worker log as jobviz itself reads them, for programs
// that nvcc compiles as C++17 (tools/bench_cuda_marks.cu, the GPU tests):
// this header holds only C++17, and its implementation is the CLI's own scan
// (parse/workerlog_scan.h), so a check of libjobviz's lines on a GPU and
// jobviz's reading of them cannot disagree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace jobviz::log_jobs {

struct JobLine {
  std::string id, type;  // "Job (id)" and "type = ..."
  std::int64_t micro_batch = 0;
  // Epoch nanoseconds. A finished job: its start and end. An in-flight line
  // (libjobviz's watchdog): when it began, or was enqueued, and when it was seen.
  std::int64_t start = 0, end = 0;
  std::uint64_t line = 0;  // 1-based, in the file
  bool in_flight = false;  // a "still running" or "not started" line
  bool started = true;     // in_flight: false for "not started"
};

struct LogJobs {
  std::vector<JobLine> jobs;  // file order
  std::uint64_t lines = 0;    // lines in the file
  std::uint64_t skipped = 0;  // lines with a keyword that did not parse
  std::string error;          // non-empty when the file could not be read
};

LogJobs ReadLogJobs(const std::string& path);

// The first job line (finished, or in flight when `in_flight`) with this id
// and type; nullptr when none.
const JobLine* FindJob(const LogJobs& log, const std::string& id, const std::string& type, bool in_flight = false);

}  // namespace jobviz::log_jobs
