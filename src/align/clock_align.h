// Puts every machine's timestamps on the reference machine's clock: undoes
// the machines' clock jumps (align/clock_jumps.h), estimates each machine's
// clock from clock-sync lines or from the pipeline's own order
// (align/clock_estimates.h says how), and rewrites every time onto the
// reference's.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "align/clock_estimates.h"
#include "align/clock_jumps.h"
#include "model/model.h"
#include "model/time_value.h"

namespace jobviz {

enum class AlignMode { kAuto, kSync, kCausal, kNone };

struct AlignOptions {
  AlignMode mode = AlignMode::kAuto;
  int reference = 0;                      // machine index
  std::map<int, Nanos> manual_offsets;    // --clock_offset, by machine index
  // Jumps found before (jobviz follow, in earlier turns): undone first.
  std::vector<ClockJump> known_jumps;
  int threads = 1;  // for the clock jumps and the pipeline order checks (0: one per core)
};

struct ClockAlignment {
  std::vector<MachineClock> clocks;  // per machine
  size_t violations_before = 0, violations_after = 0;
  std::vector<ClockJump> jumps;  // found and undone (align/clock_jumps.h), each also a warning
  std::vector<std::string> warnings;
};

// Undoes the machines' clock jumps (unless told not to align), estimates
// the clocks as `options` says, rewrites every timestamp of the timeline
// onto the reference clock, and reports what it did.
ClockAlignment AlignClocks(Timeline& timeline, const AlignOptions& options);

}  // namespace jobviz
