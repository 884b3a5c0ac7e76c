#include "align/clock_align.h"

#include "align/replica_ties.h"

#include "align/pipeline_order.h"

#include <algorithm>
#include <optional>

namespace jobviz {

namespace {

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

Nanos OnReference(const MachineClock& clock, Nanos t) { return SaturatingSub(t, clock.OffsetAt(t)); }

}  // namespace

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

size_t CountOrderViolations(const Timeline& timeline, const std::vector<MachineClock>& clocks) {
  size_t violations = 0;
  ForEachHandOff(timeline, [&](const HandOff& h) {
    if (h.sender_machine != h.receiver_machine)
      violations += OnReference(clocks[h.receiver_machine], h.receiver->start) <
                    OnReference(clocks[h.sender_machine], h.sender->end);
  }, {.across_machines_only = true});
  return violations;
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

namespace {

// Clock sync readings are taken around the jobs they align: one further
// than this from every job of its machine is not a reading of that run.
constexpr Nanos kSyncReach = 3'600'000'000'000;  // 1 hour
// No clock estimated from data is off by more than this (NTP keeps machines
// within milliseconds; an unsynchronised one drifts by seconds a day).
constexpr Nanos kPlausibleOffset = 3'600'000'000'000;  // 1 hour
// Quartz runs within ~100 ppm of true time; beyond this a drift is noise.
constexpr double kPlausibleDriftPpm = 1000;

std::vector<std::vector<SyncReading>> SyncReadings(const Timeline& timeline, std::vector<std::string>* warnings) {
  std::vector<std::vector<SyncReading>> readings(timeline.machines.size());
  for (size_t m = 0; m < readings.size(); ++m) {
    Nanos first = kNever, last = kLowest;
    for (const Worker& worker : timeline.machines[m].workers)
      for (const Job& job : worker.jobs) first = std::min(first, job.start), last = std::max(last, job.end);
    size_t ignored = 0;
    for (const Worker& worker : timeline.machines[m].workers)
      for (const LogRecord& r : worker.markers) {
        if (r.kind != RecordKind::kClockSync) continue;
        if (first != kNever && (r.start < SaturatingSub(first, kSyncReach) || r.start > SaturatingAdd(last, kSyncReach))) {
          ++ignored;
          continue;
        }
        readings[m].push_back({r.round, r.start});
      }
    if (ignored > 0)
      warnings->push_back(timeline.machines[m].name + ": " + std::to_string(ignored) +
                          " clock sync reading(s) more than an hour away from its jobs ignored");
  }
  return readings;
}

// An estimate beyond any plausible clock error is a broken input, not a
// clock: that machine is left unaligned, and said so.
void RefuseImplausibleOffsets(const Timeline& timeline, ClockAlignment* result) {
  for (size_t m = 0; m < result->clocks.size(); ++m) {
    MachineClock& clock = result->clocks[m];
    if (clock.method != ClockMethod::kSync && clock.method != ClockMethod::kCausal && clock.method != ClockMethod::kReduce) continue;
    const bool offset_ok = clock.offset <= kPlausibleOffset && clock.offset >= -kPlausibleOffset;
    if (offset_ok && std::abs(clock.drift_ppm) <= kPlausibleDriftPpm) continue;
    if (offset_ok) {  // rounds too close together or too noisy for a drift: keep the offset alone
      char drift[96];
      std::snprintf(drift, sizeof drift, ": a drift of %.0f ppm is beyond any real clock's; ignored", clock.drift_ppm);
      result->warnings.push_back(timeline.machines[m].name + drift);
      clock.drift_ppm = 0;
      continue;
    }
    result->warnings.push_back(timeline.machines[m].name + ": its clock would be off by " +
                               FormatDuration(clock.offset) +
                               ", beyond any plausible clock error; left unaligned (give --clock_offset if it is real)");
    clock = MachineClock{ClockMethod::kNone, 0, 0.0, 0};
  }
}

// Sync mode: each machine from its rounds shared with the reference, or
// from pipeline order when it shares none.
void EstimateFromSync(const Timeline& timeline, const std::vector<std::vector<SyncReading>>& readings, int ref,
                      ClockAlignment* result) {
  std::vector<MachineClock> causal;
  for (size_t m = 0; m < readings.size(); ++m) {
    if (static_cast<int>(m) == ref) {
      result->clocks[m].method = ClockMethod::kReference;
      continue;
    }
    if (const auto clock = EstimateSyncClock(readings[m], readings[ref])) {
      result->clocks[m] = *clock;
      continue;
    }
    if (causal.empty()) causal = EstimateCausalClocks(timeline, ref);
    result->clocks[m] = causal[m];
    result->warnings.push_back(timeline.machines[m].name + " has no clock sync rounds in common with " +
                               timeline.machines[ref].name + "; its clock is aligned from pipeline order (causal)");
  }
}

// Workers of one machine share a clock: their readings of a round agree up
// to callback jitter. A worker far off suggests a mislabelled log.
void WarnAboutStrayWorkers(const Timeline& timeline, const std::vector<std::vector<SyncReading>>& readings,
                           std::vector<std::string>* warnings) {
  for (size_t m = 0; m < readings.size(); ++m) {
    const auto medians = MedianPerRound(readings[m]);
    for (const Worker& worker : timeline.machines[m].workers) {
      std::vector<Nanos> deviations;
      for (const LogRecord& r : worker.markers) {
        if (r.kind != RecordKind::kClockSync) continue;
        const auto median = medians.find(r.round);  // none for a reading that was ignored
        if (median != medians.end()) deviations.push_back(std::abs(SaturatingSub(r.start, median->second)));
      }
      if (!deviations.empty() && Median(deviations) > 200'000)
        warnings->push_back(worker.file + ": clock sync readings are " + FormatDuration(Median(deviations)) +
                            " away from the other workers of " + timeline.machines[m].name +
                            ", which share its clock");
    }
  }
}

// Moves every timestamp of the timeline onto the reference clock and notes
// each machine's alignment on it.
void ApplyClocks(const std::vector<MachineClock>& clocks, Timeline& timeline) {
  const size_t n = clocks.size();
  for (size_t m = 0; m < n; ++m) {
    const MachineClock& clock = clocks[m];
    Machine& machine = timeline.machines[m];
    machine.clock_method = n > 1 ? ClockMethodName(clock.method) : "";
    Nanos first_job = kNever;
    for (const Worker& worker : machine.workers)
      if (!worker.jobs.empty()) first_job = std::min(first_job, worker.jobs.front().start);
    machine.clock_offset = first_job == kNever ? clock.offset : clock.OffsetAt(first_job);
    machine.clock_drift_ppm = clock.drift_ppm;
    if (clock.offset == 0 && clock.drift_ppm == 0) continue;
    for (Worker& worker : machine.workers) {
      for (Job& job : worker.jobs) {
        job.start = OnReference(clock, job.start);
        job.end = OnReference(clock, job.end);
      }
      for (LogRecord& r : worker.markers) r.start = OnReference(clock, r.start);
      if (worker.end.stamped != 0) worker.end.stamped = OnReference(clock, worker.end.stamped);
      for (InFlightJob& job : worker.in_flight) {
        job.start = OnReference(clock, job.start);
        job.seen = OnReference(clock, job.seen);
      }
    }
  }
}

}  // namespace

ClockAlignment AlignClocks(Timeline& timeline, const AlignOptions& options) {
  ClockAlignment result;
  const size_t n = timeline.machines.size();
  result.clocks.assign(n, MachineClock{});
  if (options.mode != AlignMode::kNone) {
    UndoClockJumps(options.known_jumps, timeline);
    result.jumps = FindClockJumps(timeline, options.reference);
    UndoClockJumps(result.jumps, timeline);
    for (const ClockJump& jump : result.jumps) result.warnings.push_back(ClockJumpText(jump));
  }
  result.violations_before = CountOrderViolations(timeline, result.clocks);
  if (n == 0) return result;

  const auto readings = SyncReadings(timeline, &result.warnings);
  const bool any_sync = std::any_of(readings.begin(), readings.end(), [](const auto& r) { return !r.empty(); });
  AlignMode mode = options.mode;
  if (mode == AlignMode::kAuto) mode = any_sync ? AlignMode::kSync : AlignMode::kNone;
  const int ref = options.reference;
  if (mode == AlignMode::kSync && readings[ref].empty()) {
    result.warnings.push_back("the reference machine " + timeline.machines[ref].name +
                              " has no clock sync lines; aligning clocks from pipeline order (causal)");
    mode = AlignMode::kCausal;
  }
  if (mode == AlignMode::kCausal) {
    result.clocks = EstimateCausalClocks(timeline, ref, &result.warnings);
  } else if (mode == AlignMode::kSync) {
    EstimateFromSync(timeline, readings, ref, &result);
  } else if (n > 1) {
    for (size_t m = 0; m < n; ++m)
      result.clocks[m].method = static_cast<int>(m) == ref ? ClockMethod::kReference : ClockMethod::kNone;
  }
  RefuseImplausibleOffsets(timeline, &result);
  for (const auto& [machine, offset] : options.manual_offsets)
    result.clocks[machine] = MachineClock{ClockMethod::kManual, offset, 0.0, 0};
  WarnAboutStrayWorkers(timeline, readings, &result.warnings);

  // Clocks left as they were (no sync lines, no offsets given: the usual
  // single-machine or unsynchronised run) break order exactly as before;
  // counting again would walk every hand-off a second time.
  const bool unchanged = std::all_of(result.clocks.begin(), result.clocks.end(),
                                     [](const MachineClock& c) { return c.offset == 0 && c.drift_ppm == 0; });
  result.violations_after = unchanged ? result.violations_before : CountOrderViolations(timeline, result.clocks);
  if (options.mode == AlignMode::kAuto && mode == AlignMode::kNone && result.violations_after == 0)
    for (MachineClock& clock : result.clocks)
      if (clock.method == ClockMethod::kNone) clock.method = ClockMethod::kUnneeded;
  if (options.mode == AlignMode::kAuto && mode == AlignMode::kNone && result.violations_after > 0)
    result.warnings.push_back("the clocks break pipeline order " + std::to_string(result.violations_after) +
                              " times (a stage starts a micro-batch before the previous one finished it); "
                              "--clock_align causal would fix that");
  ApplyClocks(result.clocks, timeline);
  return result;
}

}  // namespace jobviz
