// The Perfetto trace as native protobuf (.pftrace / .perfetto-trace): a
// stream of TracePacket, written with jobviz's own wire encoder.
//  - Track descriptors first: a "Steps" process with its "Step" thread and a
//    "busy workers" counter track; one process per machine (name with the
//    clock alignment, which also goes to process_labels); one thread track
//    per worker and overlap lane, ordered explicitly as in the JSON.
//  - One packet sequence. Its first packet clears incremental state; event
//    packets say they need it, and carry the interned data (event names,
//    categories, debug-annotation names) in the packet that first uses it.
//  - Every job as a TrackEvent slice (begin and end packet) with integer
//    nanosecond timestamps and the JSON args as debug annotations; flows as
//    flow_ids / terminating_flow_ids on the jobs (emit/flow_chains.h).
#pragma once

#include <string>

#include "emit/trace_events.h"

namespace jobviz {

TraceStats WritePerfettoProto(const Timeline& timeline, const Sink& sink);

// The emitter: " (native Perfetto protobuf[, N extra rows for overlapping jobs])".
std::string EmitPerfettoProto(const FinishedRun& run, const Sink& sink);

// Whether `path` asks for the protobuf trace: .pftrace or .perfetto-trace,
// optionally followed by .gz.
bool IsProtobufTracePath(const std::string& path);

}  // namespace jobviz
