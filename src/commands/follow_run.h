// The stages `jobviz follow` runs on the logs as they are now: the run a
// batch run would build (commands/stages.h), and the outputs written from it.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "align/clock_jumps.h"
#include "cli/plan.h"
#include "emit/emitter.h"
#include "parse/followed_source.h"

namespace jobviz {

// The stall alarm's floor (--stall-after's default is the larger of this and 10 median steps).
inline constexpr double kDefaultStallSeconds = 60;
// Quiet this long (and 2 polls, and 2 median steps), a last step every worker
// finished is printed without waiting for the stall alarm.
inline constexpr double kQuietSeconds = 1;
// Turns of the follow loop are at least this far apart, and twice their cost.
inline constexpr double kMinTurnSeconds = 0.2;

// What a build of the followed run is for.
enum class FollowedBuild {
  kSteps,    // a turn: the steps from each log's cursor on, for the frontier (no stop report)
  kStalled,  // the stall alarm: the same, with the stop report
  kWhole,    // the outputs and the closing counts: every record kept, with the stop report
  kWholeStalled,  // the same after the stall alarm, which knows the job hung (StopOptions::hung)
};

// Build, place, align (the clock jumps of earlier turns undone first: what
// a turn builds may start after a jump), find steps. What the stages say
// goes to `messages`, not stderr: the caller says it when it changes.
bool BuildFollowedRun(const DrawPlan& plan, const FollowedSource& tree, FollowedBuild what,
                      const std::vector<ClockJump>& jumps, FinishedRun* run, std::string* messages);

// Every output of the plan, atomically: the steps `shown` (those reported,
// the last --keep-steps of them; its `first` kNoStep: from the first kept),
// or with none everything read (a run that stalled, as a batch run over
// these logs would write it). With `live_report`, also the HTML report
// into it (--serve).
bool WriteFollowedOutputs(const DrawPlan& plan, const FollowedSource& tree, const std::vector<ClockJump>& jumps,
                          std::optional<StepRange> shown, std::string* messages, std::string* live_report = nullptr);

// Steps went by and some logs have no job yet (a rank that died at
// start-up, its log a traceback): "jobviz follow: no job in the log of
// machine0 worker 3 (logs/machine0/workerlog.3) yet ...", of those not
// named before (`said`), lest a stage be missed unseen; "" when none. The
// steps are the other logs'; such a log joins when its jobs come.
std::string LogsWithoutJobs(const FollowedSource& tree, std::set<std::string>* said);

}  // namespace jobviz
