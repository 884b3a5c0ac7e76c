#include "parse/scan_logs.h"

#include <algorithm>

#include "read/byte_source.h"
#include "read/parallel_for.h"

namespace jobviz {

std::vector<WorkerLogScan> ScanLogs(const LogSet& logs, int threads, const ScanProgress& progress,
                                    const ScannedHook& scanned) {
  const LineParser parser;
  std::vector<WorkerLogScan> scans(logs.files.size());
  ParallelFor(scans.size(), threads, [&](size_t i) {
    const std::string& path = logs.files[i].path;
    std::string error;
    auto source = OpenByteSource(path, &error);
    if (!source) {
      scans[i].file = path;
      scans[i].read_error = error;
      return;
    }
    thread_local ReadBuffer buffer;  // this thread's, for every file it scans
    thread_local std::vector<LogRecord> spare_records;
    scans[i] = ScanWorkerLog(path == "-" ? "<stdin>" : path, *source, parser, LineReader::kDefaultBlock,
                             progress.bytes, &buffer, &spare_records);
    if (scanned) {
      scanned(i, scans[i]);
      // The hook took the records (BuildFile leaves the vector empty): keep its capacity for the next file.
      if (scans[i].records.empty()) spare_records = std::move(scans[i].records);
    }
    if (progress.file_done) progress.file_done();
  });
  return scans;
}

FileTotals TotalsOf(const WorkerLogScan& scan) {
  const auto named = std::count_if(scan.records.begin(), scan.records.end(),
                                   [](const LogRecord& r) { return r.kind == RecordKind::kRangePush; });
  return {scan.file, scan.bytes, scan.lines, scan.records.size(), static_cast<std::uint64_t>(named)};
}

ReadTotals TotalScans(const std::vector<WorkerLogScan>& scans, const std::vector<FileTotals>* taken) {
  ReadTotals totals;
  for (size_t i = 0; i < scans.size(); ++i) {
    const WorkerLogScan& scan = scans[i];
    totals.files.push_back(taken ? (*taken)[i] : TotalsOf(scan));
    totals.bytes += scan.bytes;
    totals.lines += scan.lines;
    totals.skipped.Merge(scan.skipped);
  }
  return totals;
}

}  // namespace jobviz
