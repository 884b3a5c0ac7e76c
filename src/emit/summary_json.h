// --summary-json: the analysis document (analyse/summary.h), indented.
#pragma once

#include <string>

#include "emit/emitter.h"

namespace jobviz {

std::string EmitSummaryJson(const FinishedRun& run, const Sink& sink);

}  // namespace jobviz
