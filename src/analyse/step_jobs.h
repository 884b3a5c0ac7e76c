// A worker's jobs grouped by step window, for the per-step analysis
// (analyse/bottleneck.cc builds one step's graph from them).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <tuple>
#include <vector>

#include "analyse/analysis.h"
#include "model/model.h"

namespace jobviz {

// A worker's jobs by step window: indices into its jobs, in start order.
// Where every window's jobs are consecutive indices (the usual case: jobs
// sorted by start, one step after the other) they are not stored (4 bytes
// a job of the run, live through the analysis): `order` stays empty and
// the ranges are job indices, read from a shared 0, 1, 2, ... (`counting`).
struct StepJobs {
  std::vector<std::uint32_t> order;
  std::vector<std::tuple<size_t, size_t, size_t>> ranges;  // (window, begin, end) by window
  bool consecutive = false;
  // `counting`: 0, 1, 2, ... at least as many as the worker has jobs.
  std::span<const std::uint32_t> Of(size_t window, std::span<const std::uint32_t> counting) const {
    const auto it = std::lower_bound(ranges.begin(), ranges.end(), std::make_tuple(window, size_t{0}, size_t{0}));
    if (it == ranges.end() || std::get<0>(*it) != window) return {};
    const std::uint32_t* base = consecutive ? counting.data() : order.data();
    return {base + std::get<1>(*it), std::get<2>(*it) - std::get<1>(*it)};
  }
};

// The jobs of `worker` by window of `steps` (by their step number; with
// `by_step` false, all of them in window 0). Jobs in no window are left out.
StepJobs GroupByWindow(const Worker& worker, const std::vector<StepWindow>& steps, bool by_step);

}  // namespace jobviz
