// One packet sequence of jobviz's native Perfetto trace: Perfetto's field
// numbers, the names and categories interned per sequence, the debug
// annotations a job carries, and the track descriptors (process, thread,
// counter) and slice fields every event starts with. The trace's layout (which
// tracks, which slices) is emit/perfetto_proto.cc's.
#pragma once

#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "emit/emitter.h"
#include "emit/proto_wire.h"
#include "model/model.h"

namespace jobviz {

// Field numbers of Perfetto's protos (protos/perfetto/trace/...), and
// test/proto/perfetto_subset.proto, which the tests decode with.
namespace pb {
constexpr std::uint32_t kTracePacket = 1;
// TracePacket
constexpr std::uint32_t kTimestamp = 8, kSequenceId = 10, kTrackEvent = 11, kInternedData = 12, kSequenceFlags = 13,
                        kCompressedPackets = 50, kTrackDescriptor = 60;
constexpr std::uint32_t kIncrementalStateCleared = 1, kNeedsIncrementalState = 2;
// TrackDescriptor
constexpr std::uint32_t kUuid = 1, kName = 2, kProcess = 3, kThread = 4, kParentUuid = 5, kCounter = 8,
                        kChildOrdering = 11, kSiblingOrderRank = 12;
constexpr std::uint32_t kOrderingExplicit = 3;
// ProcessDescriptor and ThreadDescriptor
constexpr std::uint32_t kPid = 1, kProcessName = 6, kProcessLabels = 8, kTid = 2, kThreadName = 5;
// TrackEvent
constexpr std::uint32_t kCategoryIids = 3, kDebugAnnotations = 4, kType = 9, kNameIid = 10, kTrackUuid = 11,
                        kCounterValue = 30, kDoubleCounterValue = 44, kFlowIds = 47, kTerminatingFlowIds = 48;
constexpr std::uint32_t kSliceBegin = 1, kSliceEnd = 2, kCounterEvent = 4;
// DebugAnnotation
constexpr std::uint32_t kAnnotationNameIid = 1, kIntValue = 4, kStringValue = 6;
// InternedData; each entry is {iid = 1, name = 2}
constexpr std::uint32_t kEventCategories = 1, kEventNames = 2, kDebugAnnotationNames = 3, kIid = 1, kInternedName = 2;
}  // namespace pb

// The debug annotations of a job, by interned name id (1-based, in order).
// critical_path is interned only by traces that mark a critical path, so
// that the others keep their bytes.
enum Annotation : std::uint64_t { kMachine = 1, kWorker, kTypeArg, kJobId, kMicroBatch, kStep, kSource, kRun, kCriticalPath, kInFlight };
inline constexpr const char* kAnnotationNames[] = {"machine", "worker", "type",          "job_id",   "micro_batch",
                                        "step",    "source", "run", "critical_path", "in_flight"};
static_assert(std::size(kAnnotationNames) == kInFlight, "one name per Annotation, interned as iid = the enum value");

class ProtoTrace {
 public:
  // `annotations`: how many of kAnnotationNames the trace uses (the last it uses).
  ProtoTrace(std::uint32_t sequence, size_t flush_bytes, const Sink& sink, Annotation annotations)
      : sequence_(sequence), flush_bytes_(flush_bytes), sink_(sink), annotations_(annotations) {}

  // A TracePacket around what `fill` writes into it.
  template <typename Fill>
  void Packet(Fill fill) {
    const size_t at = wire_.BeginMessage(pb::kTracePacket);
    wire_.Varint(pb::kSequenceId, sequence_);
    fill();
    wire_.EndMessage(at);
    if (wire_.size() >= flush_bytes_) Flush();
  }
  void Flush() {
    if (wire_.empty()) return;
    sink_(wire_.view());
    wire_.clear();
  }
  ProtoWire& wire() { return wire_; }

  // The iid of an event name or category; new ones are queued for the next
  // event packet's interned data.
  std::uint64_t Name(const std::string& name) { return Intern(names_, new_names_, name); }
  std::uint64_t Category(const std::string& name) { return Intern(categories_, new_categories_, name); }
  // The same for a job's slice name and category, looked up by the type's
  // Name and the micro-batch: no string made or hashed a job.
  std::uint64_t JobName(const Job& job) {
    if (job.micro_batch < 0) return Name(SliceName(job));
    const std::uint64_t key = std::uint64_t{job.type.index()} << 32 | static_cast<std::uint64_t>(job.micro_batch);
    const auto [it, inserted] = job_names_.try_emplace(key, 0);
    if (inserted) it->second = Name(SliceName(job));
    return it->second;
  }
  std::uint64_t JobCategory(const Job& job) {
    const auto [it, inserted] = job_categories_.try_emplace(job.type.index(), 0);
    if (inserted) it->second = Category(job.type);
    return it->second;
  }

  // A slice's end, the commonest packet (one a job): with nothing new to
  // intern it is written whole into a small buffer, its lengths known
  // beforehand, in the bytes Event() would write.
  void SliceEnd(Nanos time, std::uint64_t track) {
    if (!NothingToIntern()) {
      Event(time, [&] {
        wire_.Varint(pb::kType, pb::kSliceEnd);
        wire_.Varint(pb::kTrackUuid, track);
      });
      return;
    }
    const auto ts = static_cast<std::uint64_t>(time);
    const size_t event = 2 + 1 + VarintSize(track);  // type, track uuid
    const size_t packet = 1 + VarintSize(sequence_) + 1 + VarintSize(ts) + 2 + 1 + VarintSize(event) + event;
    char bytes[2 * 10 + 64];
    char* at = WriteVarint(bytes, ProtoWire::Tag(pb::kTracePacket, 2));
    at = WriteVarint(at, packet);
    at = WriteVarint(WriteVarint(at, ProtoWire::Tag(pb::kSequenceId, 0)), sequence_);
    at = WriteVarint(WriteVarint(at, ProtoWire::Tag(pb::kTimestamp, 0)), ts);
    at = WriteVarint(WriteVarint(at, ProtoWire::Tag(pb::kSequenceFlags, 0)), pb::kNeedsIncrementalState);
    at = WriteVarint(WriteVarint(at, ProtoWire::Tag(pb::kTrackEvent, 2)), event);
    at = WriteVarint(WriteVarint(at, ProtoWire::Tag(pb::kType, 0)), pb::kSliceEnd);
    at = WriteVarint(WriteVarint(at, ProtoWire::Tag(pb::kTrackUuid, 0)), track);
    wire_.Raw(std::string_view(bytes, static_cast<size_t>(at - bytes)));
    if (wire_.size() >= flush_bytes_) Flush();
  }

  // An event packet: its interned data first, then the TrackEvent.
  template <typename Fill>
  void Event(Nanos time, Fill fill) {
    Packet([&] {
      wire_.Varint(pb::kTimestamp, static_cast<std::uint64_t>(time));
      wire_.Varint(pb::kSequenceFlags, pb::kNeedsIncrementalState);
      WriteInternedData();
      const size_t at = wire_.BeginMessage(pb::kTrackEvent);
      fill();
      wire_.EndMessage(at);
    });
  }

 private:
  using Table = std::unordered_map<std::string, std::uint64_t>;
  using Queue = std::vector<std::pair<std::uint64_t, std::string>>;
  static std::uint64_t Intern(Table& table, Queue& queue, const std::string& name) {
    const auto [it, inserted] = table.try_emplace(name, table.size() + 1);
    if (inserted) queue.emplace_back(it->second, name);
    return it->second;
  }
  void WriteEntries(std::uint32_t field, Queue& queue) {
    for (const auto& [iid, name] : queue) {
      const size_t at = wire_.BeginMessage(field);
      wire_.Varint(pb::kIid, iid);
      wire_.Bytes(pb::kInternedName, name);
      wire_.EndMessage(at);
    }
    queue.clear();
  }
  bool NothingToIntern() const { return new_names_.empty() && new_categories_.empty() && annotations_written_; }
  void WriteInternedData() {
    if (NothingToIntern()) return;
    const size_t at = wire_.BeginMessage(pb::kInternedData);
    WriteEntries(pb::kEventCategories, new_categories_);
    WriteEntries(pb::kEventNames, new_names_);
    if (!annotations_written_) {
      Queue annotations;
      for (std::uint64_t i = 0; i < annotations_; ++i) annotations.emplace_back(i + 1, kAnnotationNames[i]);
      WriteEntries(pb::kDebugAnnotationNames, annotations);
      annotations_written_ = true;
    }
    wire_.EndMessage(at);
  }

  std::uint32_t sequence_;
  size_t flush_bytes_;
  const Sink& sink_;
  ProtoWire wire_;
  Table names_, categories_;
  std::unordered_map<std::uint64_t, std::uint64_t> job_names_;      // (type, micro-batch) -> name iid
  std::unordered_map<std::uint32_t, std::uint64_t> job_categories_;  // type -> category iid
  Queue new_names_, new_categories_;
  bool annotations_written_ = false;
  std::uint64_t annotations_;  // how many of kAnnotationNames this trace uses
};

void IntAnnotation(ProtoWire& wire, Annotation name, std::int64_t value);
// Its value `head` then `tail`.
void StringAnnotation(ProtoWire& wire, Annotation name, std::string_view head, std::string_view tail = {});
// A process track: pid, name, and its children in explicit order.
void ProcessTrack(ProtoTrace& trace, std::uint64_t uuid, int pid, const std::string& name, int rank,
                  const std::string& label, bool first);
void ThreadTrack(ProtoTrace& trace, std::uint64_t uuid, std::uint64_t parent, int pid, int tid,
                 const std::string& name, int rank);
void CounterTrack(ProtoTrace& trace, std::uint64_t uuid, std::uint64_t parent, const std::string& name, int rank);
// The fields every slice begin has: its type, track, name and category.
void SliceBeginFields(ProtoWire& wire, std::uint64_t track, std::uint64_t name, std::uint64_t category);

}  // namespace jobviz
