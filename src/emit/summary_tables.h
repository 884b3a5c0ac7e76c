// The analysis as aligned tables for a terminal (--summary).
#pragma once

#include <string>

#include "analyse/analysis.h"
#include "emit/emitter.h"

namespace jobviz {

std::string SummaryTables(const Analysis& analysis);

std::string EmitSummaryTables(const FinishedRun& run, const Sink& sink);

}  // namespace jobviz
