// What reading and parsing the logs came to, per file and in all: a fact of
// the finished run that every report shows (the parser fills it in,
// parse/scan_logs.h; the emitters read it, emit/emitter.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"

namespace jobviz {

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

}  // namespace jobviz
