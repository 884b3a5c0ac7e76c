// Fuzz target: any bytes as a worker log. The scan must not crash, must
// keep its invariants, and must agree with itself at another block size.
// Built against libFuzzer with -Dfuzzing_engine=libfuzzer (clang); otherwise
// replay_main.cc runs it over test/fuzz/corpus/ as a regression test.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "parse/workerlog_scan.h"

namespace {

void Require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  static const jobviz::LineParser parser;
  const std::string input(reinterpret_cast<const char*>(data), size);
  const jobviz::WorkerLogScan big = jobviz::ScanWorkerLogText("fuzz", input, parser);
  const jobviz::WorkerLogScan small = jobviz::ScanWorkerLogText("fuzz", input, parser, 64);

  Require(big.bytes == size, "every byte is read");
  const size_t newlines = static_cast<size_t>(std::count(input.begin(), input.end(), '\n'));
  Require(big.lines == newlines + (size > 0 && input.back() != '\n'), "every line is counted");
  Require(big.lines == small.lines, "line count does not depend on the block size");
  Require(big.skipped.total() == small.skipped.total() || big.skipped.count(jobviz::SkipReason::kOverlongLine) ||
              small.skipped.count(jobviz::SkipReason::kOverlongLine),
          "skip count does not depend on the block size");
  Require(big.records.size() == small.records.size() || small.skipped.count(jobviz::SkipReason::kOverlongLine),
          "record count does not depend on the block size");
  // Blocks of 64 bytes mostly take the scanner's short-tail paths, 1 MiB ones its widest: the same lines.
  if (big.records.size() == small.records.size())
    for (size_t i = 0; i < big.records.size(); ++i)
      Require(big.records[i].line == small.records[i].line, "a record's line does not depend on the block size");
  std::uint64_t previous_line = 0;
  for (const jobviz::LogRecord& r : big.records) {
    Require(r.line >= 1 && r.line <= big.lines, "line numbers are within the file");
    Require(r.line >= previous_line, "records are in file order");
    previous_line = r.line;
    if (r.kind == jobviz::RecordKind::kJob) Require(r.start > 0 && r.end >= r.start, "drawn jobs have sane times");
  }
  return 0;
}
