// Reads one worker log from end to end and keeps only what jobviz uses: the
// recognised records in file order, plus counts of everything else.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "read/byte_source.h"
#include "parse/line_parser.h"
#include "read/line_reader.h"
#include "model/model.h"

namespace jobviz {

struct WorkerLogScan {
  std::string file;  // as shown to the user
  std::uint64_t bytes = 0;
  std::uint64_t lines = 0;
  std::vector<LogRecord> records;  // file order
  LogEnd end;                      // how the file ends (parse/log_tail.h)
  SkipTally skipped;
  std::string read_error;  // non-empty when the file could not be read to its end
};

// `block_size` is the reader's block (tests make it tiny to cross block
// boundaries often).
// `progress`, when given, grows by the bytes of each block as it is read.
// `buffer`, when given, is read into (one per thread, reused across files).
// `spare_records`, when given, lends its capacity to the records (one per
// thread, handed back once a file's records are taken): a growing vector
// copies each record twice over and faults in fresh pages.
WorkerLogScan ScanWorkerLog(const std::string& file, ByteSource& source, const LineParser& parser,
                            size_t block_size = LineReader::kDefaultBlock,
                            std::atomic<std::uint64_t>* progress = nullptr, ReadBuffer* buffer = nullptr,
                            std::vector<LogRecord>* spare_records = nullptr);

// Complete lines appended to a followed log (jobviz follow): `text` ends
// with its last line's '\n', and its lines are numbered on from
// `lines_before`. `lines` is then the file's count so far, `end` how it
// ends so far; `bytes` counts `text` only.
WorkerLogScan ScanAppendedLines(const std::string& file, std::string_view text, const LineParser& parser,
                                std::uint64_t lines_before);

// Same, for a log held in memory (tests).
WorkerLogScan ScanWorkerLogText(const std::string& file, std::string contents,
                                const LineParser& parser,
                                size_t block_size = LineReader::kDefaultBlock);

}  // namespace jobviz
