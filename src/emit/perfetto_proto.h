// The Perfetto trace as native protobuf (.pftrace / .perfetto-trace): a
// stream of TracePacket, written with jobviz's own wire encoder.
//  - Track descriptors first: a "Steps" process with its "Step" thread and a
//    "busy workers" counter track; one process per machine (name with the
//    clock alignment, which also goes to process_labels); one thread track
//    per worker and overlap lane, ordered explicitly as in the JSON.
//  - Packet sequences that stand alone: sequence 1 holds the Steps process,
//    its step slices and the counter; each further one a machine. A
//    sequence's first packet clears incremental state; event packets say
//    they need it, and carry the interned data (event names, categories,
//    debug-annotation names) in the packet that first uses it.
//    The sequences are written on several threads and put in order.
//  - Compressed (the default for a .pftrace path): each 256 KiB of a
//    sequence's packets deflated into one TracePacket.compressed_packets, as
//    Perfetto's tracing service writes them with compression on; the trace
//    processor (and so the UI) inflates them and reads the packets inside.
//    A .pftrace.gz path writes the packets plain and gzips the whole file.
//  - Every job as a TrackEvent slice (begin and end packet) with integer
//    nanosecond timestamps and the JSON args as debug annotations; flows as
//    flow_ids / terminating_flow_ids on the jobs (emit/flow_chains.h).
#pragma once

#include <string>

#include "emit/trace_events.h"

namespace jobviz {

struct ProtoOptions {
  bool compress = false;  // packets inside compressed_packets
  int threads = 0;        // 0: one per core
  const Bottleneck* bottleneck = nullptr;  // an analysed run: its critical paths are marked (CriticalPathView)
  const FlowChains* flows = nullptr;        // the timeline's hand-off chains when already paired, else paired here
  const struct WhatIfRows* what_if = nullptr;  // a what-if's replay, drawn as the last process (emit/what_if_rows.h)
};
TraceStats WritePerfettoProto(const Timeline& timeline, const Sink& sink, const ProtoOptions& options = {});

// The emitters: " (native Perfetto protobuf[, compressed packets][, N extra
// rows for overlapping jobs])". Plain: for .pftrace.gz paths.
std::string EmitPerfettoProto(const FinishedRun& run, const Sink& sink);
std::string EmitPerfettoProtoPlain(const FinishedRun& run, const Sink& sink);

// Whether `path` asks for the protobuf trace: .pftrace or .perfetto-trace,
// optionally followed by .gz.
bool IsProtobufTracePath(const std::string& path);

}  // namespace jobviz
