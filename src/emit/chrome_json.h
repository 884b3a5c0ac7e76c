// The legacy Chrome trace that the original script wrote and users' own
// scripts read: pid 0, string thread ids GPU<d> / GPU<d>(machine:<i>), the
// original colour names, a "Step" thread.
#pragma once

#include "emit/trace_events.h"

namespace jobviz {

TraceStats WriteChromeTrace(const Timeline& timeline, const Sink& sink);

// The emitter: " (legacy Chrome trace)".
std::string EmitChromeJson(const FinishedRun& run, const Sink& sink);

}  // namespace jobviz
