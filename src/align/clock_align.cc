#include "align/clock_align.h"

#include <algorithm>
#include <optional>

#include "align/pipeline_order.h"
#include "align/replica_ties.h"
#include "read/parallel_for.h"

namespace jobviz {

namespace {

// Clock sync readings are taken around the jobs they align: one further
// than this from every job of its machine is not a reading of that run.
constexpr Nanos kSyncReach = 3'600'000'000'000;  // 1 hour
// No clock estimated from data is off by more than this (NTP keeps machines
// within milliseconds; an unsynchronised one drifts by seconds a day).
constexpr Nanos kPlausibleOffset = 3'600'000'000'000;  // 1 hour
// Quartz runs within ~100 ppm of true time; beyond this a drift is noise.
constexpr double kPlausibleDriftPpm = 1000;

// A machine at a time, on `threads` threads: every job is looked at.
std::vector<std::vector<SyncReading>> SyncReadings(const Timeline& timeline, int threads, std::vector<std::string>* warnings) {
  std::vector<std::vector<SyncReading>> readings(timeline.machines.size());
  std::vector<size_t> ignored_of(readings.size(), 0);
  ParallelFor(readings.size(), threads, [&](size_t m) {
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
    ignored_of[m] = ignored;
  });
  for (size_t m = 0; m < readings.size(); ++m)
    if (ignored_of[m] > 0)
      warnings->push_back(timeline.machines[m].name + ": " + std::to_string(ignored_of[m]) +
                          " clock sync reading(s) more than an hour away from its jobs ignored");
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
// each machine's alignment on it: a machine at a time, on `threads` threads.
void ApplyClocks(const std::vector<MachineClock>& clocks, int threads, Timeline& timeline) {
  const size_t n = clocks.size();
  ParallelFor(n, threads, [&](size_t m) {
    const MachineClock& clock = clocks[m];
    Machine& machine = timeline.machines[m];
    machine.clock_method = n > 1 ? ClockMethodName(clock.method) : "";
    Nanos first_job = kNever;
    for (const Worker& worker : machine.workers)
      if (!worker.jobs.empty()) first_job = std::min(first_job, worker.jobs.front().start);
    machine.clock_offset = first_job == kNever ? clock.offset : clock.OffsetAt(first_job);
    machine.clock_drift_ppm = clock.drift_ppm;
    if (clock.offset == 0 && clock.drift_ppm == 0) return;
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
  });
}

}  // namespace

ClockAlignment AlignClocks(Timeline& timeline, const AlignOptions& options) {
  ClockAlignment result;
  const size_t n = timeline.machines.size();
  result.clocks.assign(n, MachineClock{});
  if (options.mode != AlignMode::kNone) {
    UndoClockJumps(options.known_jumps, timeline);
    result.jumps = FindClockJumps(timeline, options.reference, options.threads);
    UndoClockJumps(result.jumps, timeline);
    for (const ClockJump& jump : result.jumps) result.warnings.push_back(ClockJumpText(jump));
  }
  result.violations_before = CountOrderViolations(timeline, result.clocks, options.threads);
  if (n == 0) return result;

  const auto readings = SyncReadings(timeline, options.threads, &result.warnings);
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
  result.violations_after = unchanged ? result.violations_before : CountOrderViolations(timeline, result.clocks, options.threads);
  if (options.mode == AlignMode::kAuto && mode == AlignMode::kNone && result.violations_after == 0)
    for (MachineClock& clock : result.clocks)
      if (clock.method == ClockMethod::kNone) clock.method = ClockMethod::kUnneeded;
  if (options.mode == AlignMode::kAuto && mode == AlignMode::kNone && result.violations_after > 0)
    result.warnings.push_back("the clocks break pipeline order " + std::to_string(result.violations_after) +
                              " times (a stage starts a micro-batch before the previous one finished it); "
                              "--clock_align causal would fix that");
  ApplyClocks(result.clocks, options.threads, timeline);
  return result;
}

}  // namespace jobviz
