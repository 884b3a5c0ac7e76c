#include "emit/proto_trace.h"

namespace jobviz {

void IntAnnotation(ProtoWire& wire, Annotation name, std::int64_t value) {
  const size_t at = wire.BeginMessage(pb::kDebugAnnotations);
  wire.Varint(pb::kAnnotationNameIid, name);
  wire.Varint(pb::kIntValue, static_cast<std::uint64_t>(value));
  wire.EndMessage(at);
}

void StringAnnotation(ProtoWire& wire, Annotation name, std::string_view head, std::string_view tail) {
  const size_t at = wire.BeginMessage(pb::kDebugAnnotations);
  wire.Varint(pb::kAnnotationNameIid, name);
  wire.Bytes(pb::kStringValue, head, tail);
  wire.EndMessage(at);
}

void ProcessTrack(ProtoTrace& trace, std::uint64_t uuid, int pid, const std::string& name, int rank,
                  const std::string& label, bool first) {
  trace.Packet([&] {
    ProtoWire& wire = trace.wire();
    if (first) wire.Varint(pb::kSequenceFlags, pb::kIncrementalStateCleared);
    const size_t at = wire.BeginMessage(pb::kTrackDescriptor);
    wire.Varint(pb::kUuid, uuid);
    const size_t process = wire.BeginMessage(pb::kProcess);
    wire.Varint(pb::kPid, static_cast<std::uint64_t>(pid));
    wire.Bytes(pb::kProcessName, name);
    if (!label.empty()) wire.Bytes(pb::kProcessLabels, label);
    wire.EndMessage(process);
    wire.Varint(pb::kChildOrdering, pb::kOrderingExplicit);
    wire.Varint(pb::kSiblingOrderRank, static_cast<std::uint64_t>(rank));
    wire.EndMessage(at);
  });
}

void ThreadTrack(ProtoTrace& trace, std::uint64_t uuid, std::uint64_t parent, int pid, int tid,
                 const std::string& name, int rank) {
  trace.Packet([&] {
    ProtoWire& wire = trace.wire();
    const size_t at = wire.BeginMessage(pb::kTrackDescriptor);
    wire.Varint(pb::kUuid, uuid);
    wire.Varint(pb::kParentUuid, parent);
    const size_t thread = wire.BeginMessage(pb::kThread);
    wire.Varint(pb::kPid, static_cast<std::uint64_t>(pid));
    wire.Varint(pb::kTid, static_cast<std::uint64_t>(tid));
    wire.Bytes(pb::kThreadName, name);
    wire.EndMessage(thread);
    wire.Varint(pb::kSiblingOrderRank, static_cast<std::uint64_t>(rank));
    wire.EndMessage(at);
  });
}

void CounterTrack(ProtoTrace& trace, std::uint64_t uuid, std::uint64_t parent, const std::string& name, int rank) {
  trace.Packet([&] {
    ProtoWire& wire = trace.wire();
    const size_t at = wire.BeginMessage(pb::kTrackDescriptor);
    wire.Varint(pb::kUuid, uuid);
    wire.Varint(pb::kParentUuid, parent);
    wire.Bytes(pb::kName, name);
    wire.EndMessage(wire.BeginMessage(pb::kCounter));  // an empty CounterDescriptor
    wire.Varint(pb::kSiblingOrderRank, static_cast<std::uint64_t>(rank));
    wire.EndMessage(at);
  });
}

void SliceBeginFields(ProtoWire& wire, std::uint64_t track, std::uint64_t name, std::uint64_t category) {
  wire.Varint(pb::kType, pb::kSliceBegin);
  wire.Varint(pb::kTrackUuid, track);
  wire.Varint(pb::kNameIid, name);
  wire.Varint(pb::kCategoryIids, category);
}

}  // namespace jobviz
