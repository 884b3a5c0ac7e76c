#include "parse/scan_logs.h"

#include <algorithm>

#include "read/byte_source.h"
#include "read/parallel_for.h"

namespace jobviz {

std::vector<WorkerLogScan> ScanLogs(const LogSet& logs, int threads, const ScanProgress& progress) {
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
    scans[i] = ScanWorkerLog(path == "-" ? "<stdin>" : path, *source, parser, LineReader::kDefaultBlock,
                             progress.bytes);
    if (progress.file_done) progress.file_done();
  });
  return scans;
}

ReadTotals TotalScans(const std::vector<WorkerLogScan>& scans) {
  ReadTotals totals;
  for (const WorkerLogScan& scan : scans) {
    const auto named = std::count_if(scan.records.begin(), scan.records.end(),
                                     [](const LogRecord& r) { return r.kind == RecordKind::kRangePush; });
    totals.files.push_back({scan.file, scan.bytes, scan.lines, scan.records.size(), static_cast<std::uint64_t>(named)});
    totals.bytes += scan.bytes;
    totals.lines += scan.lines;
    totals.skipped.Merge(scan.skipped);
  }
  return totals;
}

}  // namespace jobviz
