// Helpers of the shim tests: temporary logs, and the profiler's output read
// back by jobviz's own parser.
#pragma once

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


namespace jobviz::shim_test {

namespace fs = std::filesystem;


inline std::string TempLog() {
  static int counter = 0;
  const fs::path path = fs::temp_directory_path() /
                        ("jobviz_shim_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + ".log");
  fs::remove(path);
  return path.string();
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The profiler's output read back by jobviz's own reader.
inline WorkerLogScan ScanOutput(const std::string& path) {
  static const LineParser parser;
  return ScanWorkerLogText(path, ReadFile(path), parser);
}

inline std::vector<LogRecord> Jobs(const WorkerLogScan& scan) {
  std::vector<LogRecord> jobs;
  for (const LogRecord& r : scan.records)
    if (r.kind == RecordKind::kJob) jobs.push_back(r);
  return jobs;
}

inline std::map<std::int64_t, std::int64_t> SyncTimes(const WorkerLogScan& scan) {
  std::map<std::int64_t, std::int64_t> times;  // round -> time
  for (const LogRecord& r : scan.records)
    if (r.kind == RecordKind::kClockSync) times[r.round] = r.start;
  return times;
}

inline ProfilerConfig Config(const std::string& path) {
  ProfilerConfig c;
  c.output_path = path;
  c.global_rank = 3;
  c.local_worker = 1;
  c.world_size = 4;
  return c;
}

inline std::int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}


}  // namespace jobviz::shim_test
