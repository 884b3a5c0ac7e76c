// How each machine's clock is estimated against the reference machine's
// (align/clock_align.h puts the timestamps on it), and what an estimate is.
//
// Machines' wall clocks disagree by tens of microseconds to milliseconds
// (NTP), as long as a pipeline job; drawn raw, a stage seems to start a
// micro-batch before the previous stage finished it. Two estimators:
//  - sync: from "Clock Sync" lines (all ranks saw the same instant in one
//    round): per machine an offset, and a drift when rounds were taken at the
//    start and the end of the window;
//  - causal: from the pipeline itself: a micro-batch's forward on stage s+1
//    cannot start before its forward on stage s ended, and its backward on
//    stage s not before its backward on stage s+1 ended. No shift where the
//    raw clocks keep that order; otherwise the centre of the range of shifts
//    that removes every violation.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/time_value.h"

namespace jobviz {

// kUnneeded: --clock_align auto found no sync lines and pipeline order holds
// on the clocks as logged (kNone: not aligned, asked for or not possible).
// kReduce: tied to the reference through the gradients' all-reduce, not a hand-off (align/replica_ties.h).
enum class ClockMethod { kReference, kSync, kCausal, kManual, kNone, kUnneeded, kReduce };

const char* ClockMethodName(ClockMethod method);

// A machine's clock relative to the reference: its reading at reference
// time T is T + OffsetAt(T).
struct MachineClock {
  ClockMethod method = ClockMethod::kNone;
  Nanos offset = 0;       // at `anchor`
  double drift_ppm = 0;   // how fast it runs ahead, parts per million
  Nanos anchor = 0;
  Nanos OffsetAt(Nanos t) const {
    // In doubles, clamped: t and anchor may be far apart, and a drift
    // estimated from garbage may be huge, without anything wrapping.
    const double drift = (static_cast<double>(t) - static_cast<double>(anchor)) * drift_ppm * 1e-6;
    return SaturatingAdd(offset, static_cast<Nanos>(std::clamp(drift, -9e18, 9e18)));
  }
};
// Time `t` as read on `clock`, on the reference's clock.
inline Nanos OnReference(const MachineClock& clock, Nanos t) { return SaturatingSub(t, clock.OffsetAt(t)); }

// One clock-sync observation: a worker's reading of round `round`.
struct SyncReading {
  std::int64_t round;
  Nanos time;
};

// Offset and drift of a machine from its readings and the reference's, or
// nullopt when they share no round. Robust to an outlier round: each round
// uses the median over the machine's workers, rounds are split into a start
// and an end group by the largest time gap, and each group contributes its
// median difference. A drift is fitted only when the offset moved between
// the groups by more than 3x the readings' jitter.
std::optional<MachineClock> EstimateSyncClock(const std::vector<SyncReading>& machine,
                                              const std::vector<SyncReading>& reference);

// Pipeline order violations between machines under the given clocks (within
// a machine all workers share one clock, so clocks cannot explain them):
// stage order is global rank order (machine, then worker); jobs pair by
// type, micro-batch and how many of that pair came before on the worker.
// Each pipeline on one of up to `threads` threads (0: one per core).
size_t CountOrderViolations(const Timeline& timeline, const std::vector<MachineClock>& clocks, int threads = 1);

// Per-machine offsets from pipeline order alone (Timeline::stage_order),
// machine by machine outward from the reference along the machines that
// hand over to each other; machines no hand-off reaches (other replicas'
// pipelines) are aligned among themselves and tied through the gradient
// all-reduce (align/replica_ties.h), said in `warnings` when given.
std::vector<MachineClock> EstimateCausalClocks(const Timeline& timeline, int reference,
                                               std::vector<std::string>* warnings = nullptr);

// The median of `values` (not empty), and of each round's readings.
Nanos Median(std::vector<Nanos> values);
std::map<std::int64_t, Nanos> MedianPerRound(const std::vector<SyncReading>& readings);

}  // namespace jobviz
