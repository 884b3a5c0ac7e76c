// The legacy Chrome trace (pipeline_profile.json) in the original script's
// format, which users' own scripts read: per job a "B" and an "E" event
// named <type>_<id>, category the type, pid 0, string thread ids GPU<d> or
// GPU<d>(machine:<i>), the original colour names on jobs and steps; then a
// "Step" thread with step<N> slices. Workers in machine order, each's jobs in
// start order; overlapping jobs stay on their worker's thread, as the
// original wrote them. Only the original's defects are fixed (machine order,
// device-subset names, the start step, runs kept apart): docs/usage.md.
#pragma once

#include "emit/trace_events.h"

namespace jobviz {

// Jobs formatted on up to `threads` threads (0: one per core), in pieces
// written in order; the bytes do not depend on the threads.
TraceStats WriteChromeTrace(const Timeline& timeline, const Sink& sink, int threads);
TraceStats WriteChromeTrace(const Timeline& timeline, const Sink& sink);  // one thread (a TraceWriter)

// The emitter: " (legacy Chrome trace)".
std::string EmitChromeJson(const FinishedRun& run, const Sink& sink);

}  // namespace jobviz
