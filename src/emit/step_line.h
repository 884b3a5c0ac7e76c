// A finished step as `jobviz follow` prints it on stdout: one line of text
// for a person, or one JSON object for a shell pipeline, whose fields are
// those of a step in --summary-json ("step", "start_us", ..., "duration_us")
// plus the step's analysis (docs/follow.md).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analyse/step_report.h"

namespace jobviz {

// "step 41  31.02 ms  bubble 29.8% (ideal 27.3%)  top cause: stage 2 (-12.4%)  slow: machine2 worker 5 1.31x"
std::string StepLine(const StepReport& report);

nlohmann::json StepJson(const StepReport& report);

}  // namespace jobviz
