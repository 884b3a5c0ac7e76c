// The stages `jobviz follow` runs on the logs as they are now: the run a
// batch run would build (commands/stages.h), and the outputs written from it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cli/plan.h"
#include "emit/emitter.h"
#include "parse/tree_follower.h"

namespace jobviz {

// The stall alarm's floor (--stall-after's default is the larger of this and 10 median steps).
inline constexpr double kDefaultStallSeconds = 60;
// Turns of the follow loop are at least this far apart, and twice their cost.
inline constexpr double kMinTurnSeconds = 0.2;

// Build, place, align, find steps (the stop report included), from every
// record kept or, with `from_cursor`, from the steps not yet reported on.
// What the stages say goes to `messages`, not stderr: the caller says it
// when it changes.
bool BuildFollowedRun(const DrawPlan& plan, const TreeFollower& tree, bool from_cursor, FinishedRun* run,
                      std::string* messages);

// Every output of the plan, atomically: the steps up to `through` (the
// last one reported), or with none everything read (a run that stalled,
// as a batch run over these logs would write it). With `live_report`, also
// the HTML report into it (--serve).
bool WriteFollowedOutputs(const DrawPlan& plan, const TreeFollower& tree, std::optional<std::int64_t> through,
                          std::string* messages, std::string* live_report = nullptr);

}  // namespace jobviz
