// Reads and parses every worker log of a log set, several files at once,
// and totals what was read.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/read_totals.h"
#include "parse/workerlog_scan.h"
#include "read/log_discovery.h"

namespace jobviz {

// What the progress display watches; both may be left empty.
struct ScanProgress {
  std::atomic<std::uint64_t>* bytes = nullptr;  // grows as blocks are read
  std::function<void()> file_done;              // called after each file (from any thread)
};

// Called with each file's index and scan as soon as it is scanned, on the
// thread that scanned it (draw builds the file's worker there, so the records
// of all files never pile up).
using ScannedHook = std::function<void(size_t, WorkerLogScan&)>;

// One scan per file of `logs`, in the same order. A file that cannot be
// opened or read to its end has `read_error` set.
std::vector<WorkerLogScan> ScanLogs(const LogSet& logs, int threads, const ScanProgress& progress = {},
                                    const ScannedHook& scanned = {});

// One file's figures; count them before its records are taken.
FileTotals TotalsOf(const WorkerLogScan& scan);

// Totals of all files; `taken`, when given, holds each file's TotalsOf
// counted before its records were taken.
ReadTotals TotalScans(const std::vector<WorkerLogScan>& scans, const std::vector<FileTotals>* taken = nullptr);

}  // namespace jobviz
