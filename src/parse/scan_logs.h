// Reads and parses every worker log of a log set, several files at once,
// and totals what was read.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "parse/workerlog_scan.h"
#include "read/log_discovery.h"

namespace jobviz {

// What the progress display watches; both may be left empty.
struct ScanProgress {
  std::atomic<std::uint64_t>* bytes = nullptr;  // grows as blocks are read
  std::function<void()> file_done;              // called after each file (from any thread)
};

// One scan per file of `logs`, in the same order. A file that cannot be
// opened or read to its end has `read_error` set.
std::vector<WorkerLogScan> ScanLogs(const LogSet& logs, int threads, const ScanProgress& progress = {});

// Per-file figures kept for the report once the records have moved on into
// the timeline.
struct FileTotals {
  std::string file;
  std::uint64_t bytes = 0, lines = 0, records = 0;
  std::uint64_t named_ranges = 0;  // NVTX ranges the model named (not steps)
};

struct ReadTotals {
  std::vector<FileTotals> files;
  std::uint64_t bytes = 0, lines = 0;
  SkipTally skipped;
  double seconds = 0;  // wall time of reading and parsing
};

ReadTotals TotalScans(const std::vector<WorkerLogScan>& scans);

}  // namespace jobviz
