#include "align/clock_estimates.h"

#include <algorithm>
#include <optional>

#include "align/pipeline_order.h"
#include "align/replica_ties.h"
#include "read/parallel_for.h"

namespace jobviz {

Nanos Median(std::vector<Nanos> values) {
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  Nanos upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const Nanos lower = *std::max_element(values.begin(), values.begin() + mid);
  return lower + (upper - lower) / 2;
}

std::map<std::int64_t, Nanos> MedianPerRound(const std::vector<SyncReading>& readings) {
  std::map<std::int64_t, std::vector<Nanos>> by_round;
  for (const SyncReading& r : readings) by_round[r.round].push_back(r.time);
  std::map<std::int64_t, Nanos> medians;
  for (auto& [round, times] : by_round) medians[round] = Median(std::move(times));
  return medians;
}

const char* ClockMethodName(ClockMethod method) {
  switch (method) {
    case ClockMethod::kReference: return "reference";
    case ClockMethod::kSync: return "sync";
    case ClockMethod::kCausal: return "causal";
    case ClockMethod::kManual: return "manual";
    case ClockMethod::kNone: return "none";
    case ClockMethod::kUnneeded: return "unneeded";
    case ClockMethod::kReduce: return "all-reduce";
  }
  return "?";
}

std::optional<MachineClock> EstimateSyncClock(const std::vector<SyncReading>& machine,
                                              const std::vector<SyncReading>& reference) {
  const auto mine = MedianPerRound(machine);
  const auto theirs = MedianPerRound(reference);
  struct Point {
    Nanos at;          // reference time of the round
    Nanos difference;  // machine minus reference
  };
  std::vector<Point> points;
  for (const auto& [round, time] : mine) {
    const auto it = theirs.find(round);
    if (it != theirs.end()) points.push_back({it->second, time - it->second});
  }
  if (points.empty()) return std::nullopt;
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.at < b.at; });

  // Start and end groups: split at the largest gap when it dwarfs the others.
  size_t split = points.size();
  if (points.size() >= 2) {
    size_t widest = 1;
    Nanos total = 0;
    for (size_t i = 1; i < points.size(); ++i) {
      const Nanos gap = points[i].at - points[i - 1].at;
      total += gap;
      if (gap > points[widest].at - points[widest - 1].at) widest = i;
    }
    const Nanos widest_gap = points[widest].at - points[widest - 1].at;
    if (widest_gap > 4 * (total - widest_gap)) split = widest;
  }
  auto group = [&](size_t begin, size_t end) {
    std::vector<Nanos> at, difference;
    for (size_t i = begin; i < end; ++i) {
      at.push_back(points[i].at);
      difference.push_back(points[i].difference);
    }
    return Point{Median(at), Median(difference)};
  };
  const Point start = group(0, split);
  MachineClock clock{ClockMethod::kSync, start.difference, 0.0, start.at};
  if (split == points.size()) return clock;

  // A drift is kept only when the offset moved between the groups by more
  // than three times the readings' jitter (median absolute deviation within
  // the groups); otherwise a short window would turn jitter into drift.
  const Point end = group(split, points.size());
  std::vector<Nanos> deviations;
  for (size_t i = 0; i < points.size(); ++i)
    deviations.push_back(std::abs(points[i].difference - (i < split ? start : end).difference));
  const Nanos jitter = Median(deviations);
  if (std::abs(end.difference - start.difference) > 3 * jitter) {
    clock.drift_ppm = static_cast<double>(end.difference - start.difference) /
                      static_cast<double>(end.at - start.at) * 1e6;
  } else {
    clock.offset = group(0, points.size()).difference;
  }
  return clock;
}

size_t CountOrderViolations(const Timeline& timeline, const std::vector<MachineClock>& clocks, int threads) {
  const std::vector<PipelineChain> chains = PipelineChains(timeline);
  std::vector<size_t> violations(chains.size(), 0);
  ParallelFor(chains.size(), threads, [&](size_t c) {
    ForEachHandOffInChain(chains[c], [&](const HandOff& h) {
      if (h.sender_machine != h.receiver_machine)
        violations[c] += OnReference(clocks[h.receiver_machine], h.receiver->start) <
                         OnReference(clocks[h.sender_machine], h.sender->end);
    }, {.across_machines_only = true});
  });
  size_t total = 0;
  for (size_t v : violations) total += v;
  return total;
}

std::vector<MachineClock> EstimateCausalClocks(const Timeline& timeline, int reference, std::vector<std::string>* warnings) {
  const size_t n = timeline.machines.size();
  // For machines a < b that hand over to each other: o[b] - o[a] in [low, high].
  std::map<std::pair<int, int>, std::pair<Nanos, Nanos>> ranges;
  ForEachHandOff(timeline, [&](const HandOff& h) {
    const int from = h.sender_machine, to = h.receiver_machine;
    if (from == to) return;
    const Nanos slack = h.receiver->start - h.sender->end;  // o[to] - o[from] <= slack
    const auto key = std::minmax(from, to);
    auto [it, inserted] = ranges.try_emplace({key.first, key.second}, kLowest, kNever);
    if (from < to) it->second.second = std::min(it->second.second, slack);
    else it->second.first = std::max(it->second.first, -slack);
  }, {.across_machines_only = true});
  std::vector<MachineClock> clocks(n);
  for (auto& c : clocks) c.method = ClockMethod::kCausal;
  clocks[reference].method = ClockMethod::kReference;
  // No shift when the raw clocks already keep pipeline order. Otherwise the
  // centre of the feasible range: its edges leave the boundary transfer at
  // exactly zero, one transfer time from the truth, while the centre is
  // right when forward and backward transfers take equally long.
  auto pick = [](Nanos lo, Nanos hi) -> Nanos {
    if (lo <= 0 && 0 <= hi) return 0;
    if (lo == kLowest || hi == kNever) return std::clamp<Nanos>(0, lo, hi);
    return lo / 2 + hi / 2;  // also when lo > hi (contradictory data): split the difference
  };
  auto shifted = [](Nanos base, Nanos bound) { return bound == kLowest || bound == kNever ? bound : base + bound; };
  // Outward from the reference along machines that hand over to each other;
  // then from the first machine not reached, and so on: each set of
  // machines that hand over among themselves (a replica's pipeline) on the
  // clock of its first.
  std::vector<bool> placed(n, false);
  std::vector<int> component(n, -1);
  std::vector<int> queue;
  int sets = 0;
  const auto place = [&](int root) {
    placed[root] = true;
    component[root] = sets++;
    queue.push_back(root);
  };
  place(reference);
  for (size_t q = 0;; ++q) {
    if (q == queue.size()) {
      const auto next = std::find(placed.begin(), placed.end(), false);
      if (next == placed.end()) break;
      place(static_cast<int>(next - placed.begin()));
    }
    const int a = queue[q];
    for (const auto& [pair, range] : ranges) {
      const bool forward = pair.first == a && !placed[pair.second];
      const bool backward = pair.second == a && !placed[pair.first];
      if (!forward && !backward) continue;
      const int b = forward ? pair.second : pair.first;
      // o[b] - o[a] in [lo, hi] (flip the range when a is the larger index).
      const Nanos lo = forward ? range.first : (range.second == kNever ? kLowest : -range.second);
      const Nanos hi = forward ? range.second : (range.first == kLowest ? kNever : -range.first);
      const Nanos base = clocks[a].offset;
      clocks[b].offset = pick(shifted(base, lo), shifted(base, hi));
      placed[b] = true;
      component[b] = component[a];
      queue.push_back(b);
    }
  }
  std::vector<std::string> ignored;
  TieReplicas(timeline, component, reference, &clocks, warnings ? warnings : &ignored);
  return clocks;
}

}  // namespace jobviz
