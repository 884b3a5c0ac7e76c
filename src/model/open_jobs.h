// Jobs the shim's watchdog saw begin (or wait to) and never end, as every
// view draws them: an open slice on the worker's row from the job's start
// to the end of its log. One list, so the traces and the HTML show the
// same slices.
#pragma once

#include <string>
#include <vector>

#include "model/model.h"

namespace jobviz {

// Whether a watchdog line still stands after a worker's job that ended at
// `last_end`: it began after that job, or was written long after it ended
// (a job that ran on while its line was written).
bool OpenAfter(const InFlightJob& job, Nanos last_end);

struct OpenSlice {
  const InFlightJob* job = nullptr;
  Nanos start = 0, end = 0;  // end: the log's end (its last stamped line, or the watchdog's line)
};

// The worker's open slices, in start order: only those that start once its
// last job ended and the previous open slice closed, so that slices nest.
std::vector<OpenSlice> OpenSlices(const Worker& worker);

// "backward 2 (never ended)", and what the line said.
std::string OpenSliceName(const InFlightJob& job);
const char* OpenSliceNote(const InFlightJob& job);

}  // namespace jobviz
