// The Perfetto trace as JSON (Trace Event Format as Perfetto's JSON importer
// reads it): a "Steps" process with the step row and a busy-workers
// counter, one process per machine with one thread per worker (numeric ids,
// names and sort order), every job with its args (JsonArgs), flow arrows
// along each micro-batch hand-off, and a what-if's replay when one is drawn.
#pragma once

#include "emit/trace_events.h"

namespace jobviz {

// Formatted on up to `threads` threads (0: one per core), written in order;
// each job with the args `args` says.
// With `bottleneck` (an analysed run), the critical paths are marked (CriticalPathView).
// `flows`: the timeline's hand-off chains, paired elsewhere (waited for only
// once the jobs are written), else paired here.
// `what_if`: a what-if's replay, drawn as the last process (emit/what_if_rows.h).
struct WhatIfRows;
TraceStats WritePerfettoTrace(const Timeline& timeline, const Sink& sink, int threads, JsonArgs args,
                              const Bottleneck* bottleneck = nullptr, const std::shared_future<FlowChains>* flows = nullptr,
                              const WhatIfRows* what_if = nullptr);
inline TraceStats WritePerfettoTrace(const Timeline& timeline, const Sink& sink) {
  return WritePerfettoTrace(timeline, sink, 0, JsonArgs::kCompact);
}
inline TraceStats WritePerfettoTraceFullArgs(const Timeline& timeline, const Sink& sink) {
  return WritePerfettoTrace(timeline, sink, 0, JsonArgs::kFull);
}

// The emitter: " (N extra rows for overlapping jobs)" when there were any.
std::string EmitPerfettoJson(const FinishedRun& run, const Sink& sink);

}  // namespace jobviz
