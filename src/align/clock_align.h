// Puts every machine's timestamps on the reference machine's clock.
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
#include <map>
#include <string>
#include <vector>

#include "align/clock_jumps.h"
#include "model/model.h"
#include "model/time_value.h"

namespace jobviz {

enum class AlignMode { kAuto, kSync, kCausal, kNone };
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

struct AlignOptions {
  AlignMode mode = AlignMode::kAuto;
  int reference = 0;                      // machine index
  std::map<int, Nanos> manual_offsets;    // --clock_offset, by machine index
  // Jumps found before (jobviz follow, in earlier turns): undone first.
  std::vector<ClockJump> known_jumps;
};

struct ClockAlignment {
  std::vector<MachineClock> clocks;  // per machine
  size_t violations_before = 0, violations_after = 0;
  std::vector<ClockJump> jumps;  // found and undone (align/clock_jumps.h), each also a warning
  std::vector<std::string> warnings;
};

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
size_t CountOrderViolations(const Timeline& timeline, const std::vector<MachineClock>& clocks);

// Per-machine offsets from pipeline order alone (Timeline::stage_order),
// machine by machine outward from the reference along the machines that
// hand over to each other; machines no hand-off reaches (other replicas'
// pipelines) are aligned among themselves and tied through the gradient
// all-reduce (align/replica_ties.h), said in `warnings` when given.
std::vector<MachineClock> EstimateCausalClocks(const Timeline& timeline, int reference,
                                               std::vector<std::string>* warnings = nullptr);

// Undoes the machines' clock jumps (unless told not to align), estimates
// the clocks as `options` says, rewrites every timestamp of the timeline
// onto the reference clock, and reports what it did.
ClockAlignment AlignClocks(Timeline& timeline, const AlignOptions& options);

}  // namespace jobviz
