// Emits the timeline as JSON traces: the Perfetto file (numeric ids,
// process/thread names and sort order) and the legacy Chrome trace that the
// original script wrote (string thread ids, colour names).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"

namespace jobviz {

// Jobs of one worker that overlap in time cannot share a row (the viewers
// nest slices, and partial overlaps break nesting), so each worker gets as
// many lanes as it needs; lane 0 is the worker's own row. Returns a lane per
// job (jobs sorted by start) and sets `lane_count` (at least 1).
std::vector<int> AssignLanes(const std::vector<Job>& jobs, int* lane_count);

struct TraceStats {
  size_t jobs = 0;
  size_t steps = 0;
  size_t overlap_lanes = 0;  // extra rows made for overlapping jobs
  size_t flows = 0;          // hand-off arrows (Perfetto trace only)
};

// Receives the document in pieces of about 1 MiB, so the whole file never
// has to sit in memory.
using TraceSink = std::function<void(std::string_view)>;

TraceStats WritePerfettoTrace(const Timeline& timeline, const TraceSink& sink);
TraceStats WriteChromeTrace(const Timeline& timeline, const TraceSink& sink);

// The whole document as a string (tests).
std::string PerfettoTraceText(const Timeline& timeline);
std::string ChromeTraceText(const Timeline& timeline);

}  // namespace jobviz
