#include "emit/what_if_rows.h"
#include "emit/perfetto_proto.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <new>
#include <optional>
#include <unordered_map>

#include "analyse/analysis.h"
#include "emit/packet_deflate.h"
#include "emit/proto_trace.h"
#include "emit/proto_wire.h"
#include "model/open_jobs.h"
#include "read/parallel_for.h"

namespace jobviz {

namespace {

constexpr std::uint64_t kStepsUuid = 1, kStepThreadUuid = 2, kBusyUuid = 3, kCriticalPathUuid = 4, kFirstMachineUuid = 16;
constexpr size_t kFlushBytes = 1 << 20;
// Packets per compressed_packets: big enough for deflate to find the
// repeats, small enough to stay in the CPU's cache.
constexpr size_t kPackedPieceBytes = 256 << 10;
// Compressed sequences made, per thread, past the next one to write.
constexpr size_t kSequencesAhead = 8;

// What every job of a worker shares, encoded once: its machine and worker
// annotations (and the type's, for the type of the job before), and the
// start of its source annotation, "FILE:".
class WorkerAnnotations {
 public:
  WorkerAnnotations(const Worker& worker, std::string_view source_root)
      : source_prefix_(SourcePrefix(worker, source_root)) {
    IntAnnotation(shared_, kMachine, worker.machine);
    IntAnnotation(shared_, kWorker, worker.index);
    shared_size_ = shared_.size();
  }
  // The machine, worker and type annotations of a job of `type`.
  std::string_view Leading(Name type) {
    if (!type_known_ || type != type_) {
      shared_.Truncate(shared_size_);
      StringAnnotation(shared_, kTypeArg, type);
      type_ = type;
      type_known_ = true;
    }
    return shared_.view();
  }
  const std::string& source_prefix() const { return source_prefix_; }

 private:
  ProtoWire shared_;
  size_t shared_size_ = 0;
  Name type_;
  bool type_known_ = false;
  std::string source_prefix_;
};

void JobSlice(ProtoTrace& trace, std::uint64_t track, WorkerAnnotations& annotations, const Job& job, FlowMark flow,
              bool critical) {
  const std::uint64_t name = trace.JobName(job), category = trace.JobCategory(job);
  trace.Event(job.start, [&] {
    ProtoWire& wire = trace.wire();
    SliceBeginFields(wire, track, name, category);
    wire.Raw(annotations.Leading(job.type));  // machine, worker, type
    StringAnnotation(wire, kJobId, job.id);
    IntAnnotation(wire, kMicroBatch, job.micro_batch);
    IntAnnotation(wire, kStep, StepNumber(job.step));
    if (StepRun(job.step) > 0) IntAnnotation(wire, kRun, StepRun(job.step));
    char line[24];  // "FILE:LINE", the line number appended here: no string built a job
    const auto written = std::to_chars(line, line + sizeof line, static_cast<std::int64_t>(job.line));
    StringAnnotation(wire, kSource, annotations.source_prefix(), std::string_view(line, static_cast<size_t>(written.ptr - line)));
    if (critical) IntAnnotation(wire, kCriticalPath, 1);
    // A flow starts or passes on at a job it leaves; it ends at one it only arrives at.
    if (flow.id != 0) wire.Fixed64(flow.out ? pb::kFlowIds : pb::kTerminatingFlowIds, flow.id);
  });
  trace.SliceEnd(job.end, track);
}

// A job begun and never ended (model/open_jobs.h), open to its log's end.
void OpenJobSlice(ProtoTrace& trace, std::uint64_t track, WorkerAnnotations& annotations, const OpenSlice& slice) {
  const InFlightJob& job = *slice.job;
  const std::uint64_t name = trace.Name(OpenSliceName(job)), category = trace.Category("in_flight");
  trace.Event(slice.start, [&] {
    ProtoWire& wire = trace.wire();
    SliceBeginFields(wire, track, name, category);
    StringAnnotation(wire, kJobId, job.id);  // the args the JSON trace gives it
    IntAnnotation(wire, kMicroBatch, job.micro_batch);
    StringAnnotation(wire, kInFlight, OpenSliceNote(job));
    StringAnnotation(wire, kSource, annotations.source_prefix(), std::to_string(job.line));
  });
  trace.SliceEnd(slice.end, track);
}

// The Steps process; its label names the directory the jobs' sources are relative to.
void StepsProcess(ProtoTrace& trace, const Timeline& timeline, std::string_view source_root, TraceStats* stats,
                  const CriticalPathView& critical, int critical_tid) {
  ProcessTrack(trace, kStepsUuid, kStepsPid, "Steps", 0,
               source_root.empty() ? "" : "source root " + std::string(source_root), /*first=*/true);
  ThreadTrack(trace, kStepThreadUuid, kStepsUuid, kStepsPid, kStepsPid, "Step", 0);
  CounterTrack(trace, kBusyUuid, kStepsUuid, "busy workers", 1);
  const std::uint64_t category = trace.Category("step");
  for (const StepSpan& step : timeline.steps) {
    const std::uint64_t name = trace.Name(StepSliceName(step));
    trace.Event(step.start, [&] {
      SliceBeginFields(trace.wire(), kStepThreadUuid, name, category);
      IntAnnotation(trace.wire(), kStep, StepNumber(step.step));
      if (StepRun(step.step) > 0) IntAnnotation(trace.wire(), kRun, StepRun(step.step));
    });
    trace.SliceEnd(step.end, kStepThreadUuid);
    ++stats->steps;
  }
  if (critical.empty()) return;
  ThreadTrack(trace, kCriticalPathUuid, kStepsUuid, kStepsPid, critical_tid, kCriticalPathRow, 2);
  const std::uint64_t path_category = trace.Category("critical_path");
  for (const CriticalPathView::Slice& slice : critical.slices()) {
    const std::uint64_t name = trace.Name(slice.name);
    trace.Event(slice.start, [&] {
      SliceBeginFields(trace.wire(), kCriticalPathUuid, name, path_category);
      IntAnnotation(trace.wire(), kStep, StepNumber(slice.step));
      if (StepRun(slice.step) > 0) IntAnnotation(trace.wire(), kRun, StepRun(slice.step));
    });
    trace.SliceEnd(slice.end, kCriticalPathUuid);
  }
}

void BusyCounter(ProtoTrace& trace, const std::vector<CounterPoint>& points, bool sampled) {
  for (const CounterPoint& point : points)
    trace.Event(point.at, [&] {
      trace.wire().Varint(pb::kType, pb::kCounterEvent);
      trace.wire().Varint(pb::kTrackUuid, kBusyUuid);
      if (sampled) {
        std::uint64_t bits;
        std::memcpy(&bits, &point.value, sizeof bits);
        trace.wire().Fixed64(pb::kDoubleCounterValue, bits);
      } else {
        trace.wire().Varint(pb::kCounterValue, static_cast<std::uint64_t>(point.value));
      }
    });
}

// A row's track uuid: after the groups' process tracks, in row order.
std::uint64_t RowUuid(const std::vector<RowGroup>& groups, int tid) {
  return kFirstMachineUuid + groups.size() + static_cast<std::uint64_t>(RowRank(tid));
}

// A row group (a machine, or a stage under --rows stage): its process track,
// its workers' rows and jobs.
void GroupProcess(ProtoTrace& trace, const Timeline& timeline, const FlowChains& flows,
                  const std::vector<RowGroup>& groups, size_t g, std::string_view source_root, TraceStats* stats,
                  const CriticalPathView& critical) {
  const RowGroup& group = groups[g];
  const int pid = GroupPid(g);
  const std::uint64_t process_uuid = kFirstMachineUuid + g;
  const Machine* group_machine = group.machine >= 0 ? &timeline.machines[static_cast<size_t>(group.machine)] : nullptr;
  ProcessTrack(trace, process_uuid, pid, group.title, static_cast<int>(g) + 1,
               group_machine && !group_machine->clock_method.empty() ? "clock " + ClockText(*group_machine) : "",
               /*first=*/true);
  for (size_t w = 0; w < group.workers.size(); ++w) {
    const auto& [m, worker] = group.workers[w];
    const WorkerRows& r = group.rows[w];
    for (int lane = 0; lane < r.lane_count; ++lane) {
      const int tid = r.first_tid + lane;
      ThreadTrack(trace, RowUuid(groups, tid), process_uuid, pid, tid,
                  RowName(timeline.machines[m], *worker, lane, timeline.topology), RowRank(tid));
    }
    WorkerJobMarks marks = group.what_if ? WorkerJobMarks() : WorkerJobMarks(&flows, critical, m, *worker);
    WorkerAnnotations annotations(*worker, source_root);
    for (size_t j = 0; j < worker->jobs.size(); ++j)
      JobSlice(trace, RowUuid(groups, r.Tid(j)), annotations, worker->jobs[j], marks.Flow(j),
               marks.OnCriticalPath(j));
    if (group.what_if) continue;  // a copy of a worker: not the run's own jobs or rows
    stats->overlap_lanes += static_cast<size_t>(r.lane_count - 1);
    stats->jobs += worker->jobs.size();
    for (const OpenSlice& slice : OpenSlices(*worker)) OpenJobSlice(trace, RowUuid(groups, r.first_tid), annotations, slice);
  }
}

// What every sequence is written from, worked out once before any is.
struct TraceParts {
  const Timeline& timeline;
  const FlowChains& flows;
  const std::vector<RowGroup>& groups;
  std::string_view source_root;
  const CriticalPathView& critical;
  const std::vector<CounterPoint>& busy;  // the busy-workers counter, added up on all threads beforehand
  bool busy_sampled;
};

// The trace in independent packet sequences, so they can be written on
// several threads: sequence 1 holds the Steps process and the counter, each
// further one a machine (as each machine's own tracing would). Every
// sequence clears its incremental state first and interns its own names.
// The layout does not depend on the number of threads: the bytes do not either.
void WriteSequence(ProtoTrace& trace, const TraceParts& parts, size_t sequence, TraceStats* stats) {
  if (sequence == 0) {
    StepsProcess(trace, parts.timeline, parts.source_root, stats, parts.critical, CriticalPathTid(parts.groups));
    BusyCounter(trace, parts.busy, parts.busy_sampled);
  } else {
    GroupProcess(trace, parts.timeline, parts.flows, parts.groups, sequence - 1, parts.source_root, stats,
                 parts.critical);
  }
  trace.Flush();
}

void AddStats(TraceStats& total, const TraceStats& part) {
  total.jobs += part.jobs;
  total.steps += part.steps;
  total.overlap_lanes += part.overlap_lanes;
}

// Deflates (zlib format, as Perfetto's own tracing service writes it) each
// piece of packets into one TracePacket.compressed_packets, which Perfetto's
// trace processor inflates and reads as the packets themselves.
class PacketCompressor {
 public:
  explicit PacketCompressor(std::string& out) : out_(out) {}

  void Compress(std::string_view packets) {
    if (packets.empty()) return;
    const size_t at = wire_.BeginMessage(pb::kTracePacket);
    wire_.Bytes(pb::kCompressedPackets, deflater_.Deflate(packets));
    wire_.EndMessage(at);
    out_.append(wire_.view());
    wire_.clear();
  }

 private:
  std::string& out_;
  PacketDeflater deflater_;
  ProtoWire wire_;
};

}  // namespace

TraceStats WritePerfettoProto(const Timeline& timeline, const Sink& sink, const ProtoOptions& options) {
  std::optional<FlowChains> own;
  const FlowChains& flows = options.flows ? *options.flows : own.emplace(timeline);
  std::vector<RowGroup> groups = LayOutRows(timeline, options.threads);
  if (options.what_if) AddWhatIfGroup(*options.what_if, &groups);
  const size_t sequences = 1 + groups.size();
  const std::string source_root = SourceRoot(timeline);
  const CriticalPathView critical(timeline, options.bottleneck);
  bool sampled = false;
  const std::vector<CounterPoint> busy = BusyWorkers(timeline, &sampled, options.threads);
  const TraceParts parts{timeline, flows, groups, source_root, critical, busy, sampled};
  // Only the names a trace uses are interned: a trace without open jobs or
  // critical paths stays as it was before either existed.
  bool open_jobs = false;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) open_jobs = open_jobs || !OpenSlices(worker).empty();
  const Annotation annotations = open_jobs ? kInFlight : !critical.empty() ? kCriticalPath : kRun;
  std::vector<TraceStats> stats(sequences);
  if (!options.compress) {  // straight to the sink, one sequence after the other
    for (size_t i = 0; i < sequences; ++i) {
      ProtoTrace trace(static_cast<std::uint32_t>(i + 1), kFlushBytes, sink, annotations);
      WriteSequence(trace, parts, i, &stats[i]);
    }
  } else {  // compressed in parallel, each written as soon as the ones before it are
    // The first sequence (the critical paths' slices and the counter: tens
    // of thousands of events on a large run) takes as long as a dozen
    // machines' sequences, and a machine's compressed sequence is small (about
    // 25 bytes a job): the other threads go on with the machines meanwhile.
    const size_t ahead = kSequencesAhead * static_cast<size_t>(ThreadCount(options.threads));
    WriteInOrder(sequences, options.threads, [&](size_t i, std::string& out) {
      PacketCompressor compressor(out);
      const Sink compress = [&](std::string_view packets) { compressor.Compress(packets); };
      ProtoTrace trace(static_cast<std::uint32_t>(i + 1), kPackedPieceBytes, compress, annotations);
      WriteSequence(trace, parts, i, &stats[i]);
    }, sink, ahead);
  }
  TraceStats total;
  for (const TraceStats& part : stats) AddStats(total, part);
  total.flows = flows.hand_offs();
  return total;
}

namespace {

std::string ProtoNote(const TraceStats& stats, bool compressed) {
  std::string note = compressed ? " (native Perfetto protobuf, compressed packets" : " (native Perfetto protobuf";
  if (stats.overlap_lanes > 0)
    note += ", " + std::to_string(stats.overlap_lanes) + (stats.overlap_lanes == 1 ? " extra row" : " extra rows") +
            " for overlapping jobs";
  return note + ")";
}

}  // namespace

std::string EmitPerfettoProto(const FinishedRun& run, const Sink& sink) {
  return ProtoNote(WritePerfettoProto(run.timeline, sink, {.compress = true, .threads = run.threads, .bottleneck = run.marked_paths(),
                                                           .flows = run.paired_flows(), .what_if = &run.what_if}), true);
}

std::string EmitPerfettoProtoPlain(const FinishedRun& run, const Sink& sink) {
  return ProtoNote(WritePerfettoProto(run.timeline, sink, {.compress = false, .threads = run.threads, .bottleneck = run.marked_paths(),
                                                           .flows = run.paired_flows(), .what_if = &run.what_if}), false);
}

bool IsProtobufTracePath(const std::string& path) {
  const std::string bare = path.ends_with(".gz") ? path.substr(0, path.size() - 3) : path;
  return bare.ends_with(".pftrace") || bare.ends_with(".perfetto-trace");
}

}  // namespace jobviz
