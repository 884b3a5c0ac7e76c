// A machine's clock stepped while the run went on (NTP setting a clock that
// had wandered too far, an administrator, a virtual machine resumed): every
// time it logged afterwards is off by the step. No one offset aligns such a
// machine, and every step after the jump looks seconds long or out of order.
//
// Found from pipeline order, without sync lines: each hand-off between two
// machines bounds the difference of their clocks (a forward hand-off from
// machine a to b: o[b] - o[a] <= its slack; a backward one from b to a:
// o[b] - o[a] >= minus its slack). Taken in step order, the bounds of a
// steady clock all agree; after a jump of J they agree with each other again
// but not with those before, by about J. A slowly drifting clock moves the
// bounds by far less than kMinClockJump at a time, and a single job with a
// stale timer disagrees alone: neither is a jump.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/model.h"

namespace jobviz {

// Smaller jumps stay inside the slack of the hand-offs, or are noise.
inline constexpr Nanos kMinClockJump = 1'000'000;  // 1 ms

struct ClockJump {
  std::string machine;
  Nanos shift = 0;  // how far its clock moved: > 0 forward
  // Where each of the machine's logs is on the new clock: from the first
  // job of the step the jump was seen in (the step holding the jump moves
  // whole: its own figures are approximate).
  std::vector<std::pair<std::string, std::uint64_t>> from_lines;
  std::string against;  // the neighbour nearer the reference, whose hand-offs showed it
};

// The jumps found as above, of each machine against `reference`: followed
// out along the machines that hand over, a machine's are those of its
// neighbour nearer the reference plus its own against that neighbour (a
// machine in the middle that jumps disagrees with both neighbours and is
// the one moved; when the reference jumps, all it reaches are moved).
// The machines' hand-offs with their neighbours are compared on up to `threads` threads.
std::vector<ClockJump> FindClockJumps(const Timeline& timeline, int reference, int threads = 1);

// Moves every time each jump's logs wrote from its line on back by its
// shift: the machine on one clock again. Logs not in the timeline are left.
void UndoClockJumps(const std::vector<ClockJump>& jumps, Timeline& timeline);

// "machine1: its clock jumps 20.0 s forward at machine1/workerlog.0:5123
// (hand-offs with machine0); later times are moved back 20.0 s".
std::string ClockJumpText(const ClockJump& jump);

}  // namespace jobviz
