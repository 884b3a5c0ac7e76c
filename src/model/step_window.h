// --steps A:B: keep only the jobs and steps of a window of steps, in every
// output, so a loadable slice can be cut out of a huge run.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/model.h"

namespace jobviz {

// Steps first..last, both included; open ends take every step on that side.
struct StepRange {
  std::int64_t first = INT64_MIN, last = INT64_MAX;
  bool Contains(std::int64_t step) const { return step >= first && step <= last; }
};

// "3:5", "3:", ":5" or "4" (one step).
std::optional<StepRange> ParseStepRange(const std::string& text, std::string* error);

// Drops every job and step outside `range`, and every job in no step (before
// the first step line: `:5` and `0:5` keep the same jobs), counted in
// `outside_steps`. Fails, with `error` saying what the logs have, when no
// step boundaries were found or no job is left.
bool KeepSteps(const StepRange& range, Timeline& timeline, std::string* error, size_t* outside_steps = nullptr);

// The timeline's machines and workers (names, roles, clocks, topology)
// without their jobs, markers or steps: the frame a copy of part of it fills.
Timeline TimelineFrame(const Timeline& timeline);

// One step cut out of a timeline: a timeline of its own (the frame, the
// step, its jobs), and where the step begins in each log: the first line of
// a job of it, by the log's name (a worker's jobs of a step come after its
// jobs of earlier steps).
struct StepSlice {
  Timeline one;
  std::vector<std::pair<std::string, std::uint64_t>> first_lines;
};

// Steps [first, last) of `timeline` (found, workers placed), in one pass over
// its jobs.
std::vector<StepSlice> SliceSteps(const Timeline& timeline, size_t first, size_t last);

// A copy of `timeline` with only the jobs `keep` accepts (and only the steps
// holding one of them): machines, workers, markers and clock results as they
// are. Costs memory for the kept jobs only, so a window of a huge run is cheap.
Timeline CopyJobsWhere(const Timeline& timeline, const std::function<bool(const Job&)>& keep);

}  // namespace jobviz
