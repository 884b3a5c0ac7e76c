// How the stop report (analyse/stop_report.h) is judged against a simulated
// run's truth (analyse/stop_simulator.h): what counts as right for each
// kind of stop, and the random runs the evaluation draws
// (tools/eval_stops.cc, tools/eval-stops-cli, docs/analysis.md).
#pragma once

#include <string>

#include "analyse/stop_simulator.h"

namespace jobviz {
struct StopReport;
}

namespace jobviz::sim {

// The class a run is judged in, with its goal (docs/analysis.md):
// "stop, timed" (a stop the logs time: the right stage, last and next job,
// named without a hedge), "stop, not timed" (the hedged suspect, or the
// all-reduce its dead stage died in), "all-reduce hang" (the step and the
// group), "no stop" (finished, copied, between steps: nobody named without
// a hedge).
std::string JudgedAs(const StopTruth& truth);

// A hang or death in the all-reduce of a run's first step that left every
// pass, no closing job and no watchdog line: what the logs hold is a whole
// one-step run that prints no optimizer line, and "finished" is right too.
bool LooksFinished(const Timeline& timeline, const StopTruth& truth);

// Whether the stop report tells the truth, by the class above; `why` says what was wrong.
bool StopReportRight(const StopReport& report, const Timeline& timeline, const StopTruth& truth, std::string* why);

// A random run for the evaluation: plain (one pipeline of 8 to 64 stages,
// no topology) or hybrid (pp x mp x dp), 8 to 512 workers, 4 or one stage
// to a machine, 1 to 4 steps, jobs of 1 ms to 500 ms, with a random stop.
StopRun RandomStopRun(std::uint64_t seed);

}  // namespace jobviz::sim
