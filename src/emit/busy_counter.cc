#include "emit/busy_counter.h"

#include <algorithm>
#include <limits>

#include "read/parallel_for.h"

namespace jobviz {

namespace {

// One worker's busy spans, in time order: the union of its jobs (sorted by
// start), so overlapping or touching jobs count once and empty ones not at
// all. Calls `span(from, to)` for each.
template <class Span>
void ForEachBusySpan(const std::vector<Job>& jobs, Span span) {
  size_t next = 0;
  while (true) {
    while (next < jobs.size() && jobs[next].end <= jobs[next].start) ++next;
    if (next == jobs.size()) return;
    const Nanos from = jobs[next].start;
    Nanos to = jobs[next].end;
    for (++next; next < jobs.size() && jobs[next].start <= to; ++next) to = std::max(to, jobs[next].end);
    span(from, to);
  }
}

struct BusyExtent {
  size_t spans = 0;
  Nanos first = std::numeric_limits<Nanos>::max(), last = std::numeric_limits<Nanos>::min();
};

// Every change of the count, summed per instant: few enough to sort.
std::vector<CounterPoint> ExactBusy(const std::vector<const Worker*>& workers, size_t spans) {
  std::vector<std::pair<Nanos, int>> changes;
  changes.reserve(2 * spans);
  for (const Worker* worker : workers)
    ForEachBusySpan(worker->jobs, [&](Nanos from, Nanos to) {
      changes.emplace_back(from, +1);
      changes.emplace_back(to, -1);
    });
  std::sort(changes.begin(), changes.end());
  std::vector<CounterPoint> points;
  int busy = 0;
  for (size_t i = 0; i < changes.size();) {
    const Nanos at = changes[i].first;
    for (; i < changes.size() && changes[i].first == at; ++i) busy += changes[i].second;
    points.push_back({at, static_cast<double>(busy)});
  }
  return points;
}

// The busy time of every bucket (worker-nanoseconds: integers, so the sum
// does not depend on the order the workers are added in), the workers split
// among a few threads that each fill their own copy.
std::vector<CounterPoint> BucketedBusy(const std::vector<const Worker*>& workers, const BusyExtent& extent,
                                       int threads) {
  constexpr Nanos kBuckets = kMaxExactCounterPoints - 1;
  const Nanos first = extent.first, last = extent.last;
  const Nanos width = std::max<Nanos>(1, (last - first + kBuckets - 1) / kBuckets);
  const size_t buckets = static_cast<size_t>((last - first + width - 1) / width);
  const size_t groups = std::min<size_t>(static_cast<size_t>(ThreadCount(threads)), 8);  // a copy of the buckets each
  std::vector<std::vector<Nanos>> areas(groups, std::vector<Nanos>(buckets, 0));
  ParallelFor(groups, threads, [&](size_t group) {
    std::vector<Nanos>& area = areas[group];
    // The buckets a span covers whole are counted at its two ends and summed
    // once at the end: a span added bucket by bucket cost its length in
    // buckets (17 M jobs of ~200 buckets each at 131,072 GPUs).
    std::vector<std::int64_t> whole(buckets + 1, 0);
    for (size_t w = group; w < workers.size(); w += groups)
      ForEachBusySpan(workers[w]->jobs, [&](Nanos from, Nanos to) {
        const auto begin = static_cast<size_t>((from - first) / width), end = static_cast<size_t>((to - 1 - first) / width);
        if (begin == end) {
          area[begin] += to - from;
          return;
        }
        area[begin] += first + static_cast<Nanos>(begin + 1) * width - from;
        area[end] += to - (first + static_cast<Nanos>(end) * width);
        ++whole[begin + 1];
        --whole[end];
      });
    std::int64_t covering = 0;
    for (size_t b = 0; b < buckets; ++b) {
      covering += whole[b];
      area[b] += covering * width;  // a bucket covered whole is before the last: `width` long
    }
  });
  std::vector<CounterPoint> points;
  points.reserve(buckets + 1);
  for (size_t b = 0; b < buckets; ++b) {
    Nanos busy = 0;
    for (const std::vector<Nanos>& area : areas) busy += area[b];
    const Nanos from = first + static_cast<Nanos>(b) * width, to = std::min(last, from + width);
    points.push_back({from, static_cast<double>(busy) / static_cast<double>(to - from)});
  }
  points.push_back({last, 0});
  return points;
}

}  // namespace

std::vector<CounterPoint> BusyWorkers(const Timeline& timeline, bool* sampled, int threads) {
  std::vector<const Worker*> workers;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) workers.push_back(&worker);
  std::vector<BusyExtent> extents(workers.size());
  ParallelFor(workers.size(), threads, [&](size_t w) {
    ForEachBusySpan(workers[w]->jobs, [&](Nanos from, Nanos to) {
      ++extents[w].spans;
      extents[w].first = std::min(extents[w].first, from);
      extents[w].last = std::max(extents[w].last, to);
    });
  });
  BusyExtent all;
  for (const BusyExtent& extent : extents) {
    all.spans += extent.spans;
    all.first = std::min(all.first, extent.first);
    all.last = std::max(all.last, extent.last);
  }
  *sampled = 2 * all.spans > kMaxExactCounterPoints;
  if (all.spans == 0) return {};
  return *sampled ? BucketedBusy(workers, all, threads) : ExactBusy(workers, all.spans);
}

}  // namespace jobviz
