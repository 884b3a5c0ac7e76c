// A job record of an events file read without the JSON parser: the lines
// `jobviz extract` writes for jobs are nearly all of an events file, and
// nlohmann's parse of each was 2 us, most of a merge (docs/benchmarks.md,
// "131,072 GPUs"). Only the exact form extract writes is read here, with
// every value in the range the JSON reader accepts; any other line (a
// field out of range, an escape, a byte past ASCII, another order) is left
// to the JSON reader, which reads it or says what is wrong with it.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/model.h"
#include "model/topology.h"

namespace jobviz {

// {"e":E,"id":"ID","k":"job","l":L,"mb":MB,"s":S,"t":"TYPE"[,"th":TH],"w":W}
// (nlohmann's dump of event_json::RecordJson: keys in order, no spaces).
// True with the worker `W` and the record when `line` is exactly that.
bool ReadCanonicalJob(std::string_view line, std::int64_t* worker, LogRecord* record);

// A job, or one of the records every worker has a few of (the profiler
// window, the topology line), each in the exact form extract writes: at
// 131,072 GPUs the JSON parser's 16 such lines a file took a tenth of the
// reading. The same rules: true only when `line` is exactly that form.
bool ReadCanonicalRecord(std::string_view line, std::int64_t* worker, LogRecord* record);

}  // namespace jobviz
