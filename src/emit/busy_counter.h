// The "busy workers" counter of both Perfetto traces and the HTML overview:
// how many workers run a job at each moment; bubbles are its dips.
#pragma once

#include <cstddef>
#include <vector>

#include "model/model.h"

namespace jobviz {

// The "busy workers" counter: how many workers run at least one job, at
// every change. Past kMaxExactCounterPoints changes (starts and ends of
// busy spans, summed over the workers: a few thousand workers) it becomes
// the time-weighted mean over that many equal buckets, so the counter stays
// small at any scale; `sampled` says which. On up to `threads` threads.
inline constexpr size_t kMaxExactCounterPoints = 50'000;
struct CounterPoint {
  Nanos at = 0;
  double value = 0;
};
std::vector<CounterPoint> BusyWorkers(const Timeline& timeline, bool* sampled, int threads = 1);

}  // namespace jobviz
