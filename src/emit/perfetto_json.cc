#include "emit/perfetto_json.h"

#include "model/open_jobs.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <optional>
#include <unordered_map>

#include "align/pipeline_order.h"
#include "analyse/analysis.h"
#include "emit/event_buffer.h"
#include "write/json_text.h"
#include "emit/what_if_rows.h"
#include "jobviz/version.h"
#include "model/open_jobs.h"
#include "model/time_value.h"

namespace jobviz {

namespace {


// {"ph":"M","pid":P[,"tid":T],"name":"<what>","args":{"<key>":<value>}}
void AppendMetadata(std::string& out, int pid, int tid, std::string_view what, std::string_view key,
                    const std::string& value_json) {
  JsonMembers event(out);
  event.Raw("ph", "\"M\"").Int("pid", pid);
  if (tid >= 0) event.Int("tid", tid);
  event.String("name", what);
  JsonMembers(event.Object("args")).Raw(key, value_json).Close();
  event.Close();
}

std::string JsonString(std::string_view text) {
  std::string s;
  AppendJsonString(s, text);
  return s;
}

std::string_view StepSourceName(StepSource source) {
  switch (source) {
    case StepSource::kNvtx: return "nvtx";
    case StepSource::kHeuristic: return "job order";
    case StepSource::kNone: break;
  }
  return "none";
}

// "busy workers" (emit/trace_events.h). Perfetto names a JSON counter track
// "<name> <arg key>". Up to 50,000 points, formatted in pieces on several
// threads like the jobs; each point is appended straight, not member by member.
void AppendBusyCounter(const Sink& sink, const Timeline& timeline, Nanos origin, int threads) {
  bool sampled = false;
  const std::vector<CounterPoint> points = BusyWorkers(timeline, &sampled, threads);
  const std::string head = ",\n{\"name\":\"busy\",\"ph\":\"C\",\"pid\":" + std::to_string(kStepsPid) + ",\"ts\":";
  constexpr size_t kPiecePoints = 2048;
  WriteInOrder((points.size() + kPiecePoints - 1) / kPiecePoints, threads, [&](size_t piece, std::string& out) {
    const size_t first = piece * kPiecePoints, last = std::min(points.size(), first + kPiecePoints);
    out.reserve((last - first) * 64);
    for (size_t i = first; i < last; ++i) {
      out += head;
      AppendMicros(out, points[i].at - origin);
      out += ",\"args\":{\"workers\":";
      if (sampled) {
        char value[32];  // as "%.3f" writes it (both round the exact binary value), at a tenth of the cost
        const auto written = std::to_chars(value, value + sizeof value, points[i].value, std::chars_format::fixed, 3);
        out.append(value, written.ptr);
      } else {
        AppendInt(out, static_cast<std::int64_t>(points[i].value));
      }
      out += "}}";
    }
  }, sink);
}

void AppendStepsProcess(EventStream& events, const Timeline& timeline, Nanos origin, TraceStats* stats) {
  AppendMetadata(events.Begin(), kStepsPid, -1, "process_name", "name", "\"Steps\"");
  AppendMetadata(events.Begin(), kStepsPid, -1, "process_sort_index", "sort_index", "0");
  AppendMetadata(events.Begin(), kStepsPid, kStepsPid, "thread_name", "name", "\"Step\"");
  // Sorted explicitly, as the Critical path row is: a thread without an index
  // would be ordered by Perfetto after those with one.
  AppendMetadata(events.Begin(), kStepsPid, kStepsPid, "thread_sort_index", "sort_index", "0");
  const std::string pid = std::to_string(kStepsPid);
  for (const StepSpan& step : timeline.steps) {
    AppendStepEvent(events.Begin(), step, pid, pid, true, origin);
    events.End();
    ++stats->steps;
  }
}

// The critical paths' row in the Steps process: each path job and the waits
// between, cut into pieces of kPathPieceSlices slices (the first also names
// the row) that are formatted beside the jobs' pieces: tens of thousands of
// slices on a large run, formatted before the jobs on one thread, kept the
// other threads waiting. As small as a job piece (kPieceJobs): the first
// pieces are in flight while the jobs start.
constexpr size_t kPathPieceSlices = 2048;

size_t PathPieces(const CriticalPathView& critical) {
  return critical.empty() ? 0 : (critical.slices().size() + kPathPieceSlices - 1) / kPathPieceSlices;
}

void AppendCriticalPathPiece(std::string& out, const CriticalPathView& critical, size_t piece, int tid, Nanos origin) {
  if (piece == 0) {
    out += ",\n";
    AppendMetadata(out, kStepsPid, tid, "thread_name", "name", JsonString(kCriticalPathRow));
    out += ",\n";
    AppendMetadata(out, kStepsPid, tid, "thread_sort_index", "sort_index", "2");  // after the Step row and the counter
  }
  const std::vector<CriticalPathView::Slice>& slices = critical.slices();
  const size_t first = piece * kPathPieceSlices, last = std::min(slices.size(), first + kPathPieceSlices);
  for (size_t i = first; i < last; ++i) {
    const CriticalPathView::Slice& slice = slices[i];
    out += ",\n";
    JsonMembers event(out);
    event.String("name", slice.name).Raw("cat", "\"critical_path\"").Raw("ph", "\"X\"");
    event.Int("pid", kStepsPid).Int("tid", tid).Micros("ts", slice.start - origin).Micros("dur", slice.end - slice.start);
    JsonMembers args(event.Object("args"));
    args.Int("step", StepNumber(slice.step));
    if (StepRun(slice.step) > 0) args.Int("run", StepRun(slice.step));
    args.Close();
    event.Close();
  }
}

// The row groups' events (LayOutRows: machines, or stages) cut into pieces of
// at most kPieceJobs jobs, which are formatted on several threads and written
// in order. A piece that starts a worker also writes its rows' metadata, and
// one that starts a group the group's process.

struct Piece {
  size_t group = 0;
  size_t machine = 0;              // the worker's
  const Worker* worker = nullptr;  // null: a group without workers
  const WorkerRows* rows = nullptr;
  size_t first_job = 0, last_job = 0;
  bool first_of_group = false;
};

void AppendGroupMetadata(std::string& out, size_t g, const RowGroup& group) {
  const int pid = GroupPid(g);
  out += ",\n";
  AppendMetadata(out, pid, -1, "process_name", "name", JsonString(group.title));
  out += ",\n";
  AppendMetadata(out, pid, -1, "process_sort_index", "sort_index", std::to_string(g + 1));
}

// How a piece's jobs are written: the same for all pieces.
struct JobFormat {
  Nanos origin = 0;
  std::string source_root;
  JsonArgs args = JsonArgs::kCompact;
};

// A job the shim's watchdog saw begin and not end (model/open_jobs.h): an
// open slice on the worker's row from its start to the end of its log.
void AppendInFlight(std::string& out, const Worker& worker, int pid, int tid, Nanos origin, std::string_view source_root) {
  for (const OpenSlice& slice : OpenSlices(worker)) {
    const InFlightJob& job = *slice.job;
    out += ",\n";
    JsonMembers event(out);
    event.String("name", OpenSliceName(job)).Raw("cat", "\"in_flight\"").Raw("ph", "\"X\"");
    event.Int("pid", pid).Int("tid", tid).Micros("ts", slice.start - origin).Micros("dur", slice.end - slice.start);
    JsonMembers args(event.Object("args"));
    args.String("job_id", job.id.str()).Int("micro_batch", job.micro_batch);
    args.String("in_flight", OpenSliceNote(job));
    args.String("source", SourcePrefix(worker, source_root) + std::to_string(job.line));
    args.Close();
    event.Close();
  }
}

void AppendPiece(std::string& out, const Timeline& timeline, const std::vector<RowGroup>& groups, const Piece& piece,
                 const JobFormat& format, const CriticalPathView& critical) {
  const int pid = GroupPid(piece.group);
  if (piece.first_of_group) AppendGroupMetadata(out, piece.group, groups[piece.group]);
  if (!piece.worker) return;
  const Machine& machine = timeline.machines[piece.machine];
  const Worker& worker = *piece.worker;
  const WorkerRows& rows = *piece.rows;
  if (piece.first_job == 0)
    for (int lane = 0; lane < rows.lane_count; ++lane) {
      out += ",\n";
      AppendMetadata(out, pid, rows.first_tid + lane, "thread_name", "name", JsonString(RowName(machine, worker, lane, timeline.topology)));
      out += ",\n";
      AppendMetadata(out, pid, rows.first_tid + lane, "thread_sort_index", "sort_index",
                     std::to_string(RowRank(rows.first_tid + lane)));
    }
  const JobEventWriter events(worker, pid, format.origin, format.source_root, format.args);
  out.reserve(out.size() + (piece.last_job - piece.first_job) * 320);  // a job event is 150-300 bytes
  WorkerJobMarks marks = groups[piece.group].what_if ? WorkerJobMarks()
                                                     : WorkerJobMarks(nullptr, critical, piece.machine, worker, piece.first_job);
  for (size_t j = piece.first_job; j < piece.last_job; ++j) {
    out += ",\n";
    events.Append(out, worker.jobs[j], rows.Tid(j), marks.OnCriticalPath(j));
  }
  if (piece.last_job == worker.jobs.size()) AppendInFlight(out, worker, pid, rows.first_tid, format.origin, format.source_root);
}

// `,"pid":P,"tid":T,"ts":` of a row, formatted once for the row's flow
// events, not once an event (two integers an event were a fifth of them).
class RowPrefix {
 public:
  std::string_view Of(int pid, int tid) {
    if (text_.empty() || pid != pid_ || tid != tid_) {
      pid_ = pid;
      tid_ = tid;
      text_ = ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"ts\":";
    }
    return text_;
  }

 private:
  int pid_ = 0, tid_ = 0;
  std::string text_;
};

// One job's flow event (AppendHandOffArrows), after a ",\n"; `row`: its
// RowPrefix text.
void AppendFlowEvent(EventBuffer& w, const Job& job, FlowMark mark, std::string_view row, const JobFormat& format) {
  w.Lit(",\n{");
  if (format.args == JsonArgs::kFull) {  // the job's own category, as DevTools binds by it
    w.Lit("\"cat\":");
    w.JsonString(job.type.str());
    w.Char(',');
  }
  // No name: both viewers key a v1 flow by (cat, name, id), a missing name
  // alike on every event of it, and neither draws it (18 bytes a job).
  if (!mark.in)
    w.Lit("\"ph\":\"s\"");
  else if (mark.out)
    w.Lit("\"ph\":\"t\"");
  else
    w.Lit("\"ph\":\"f\",\"bp\":\"e\"");
  w.Lit(",\"id\":");
  w.Int(mark.id);
  w.Put(row);
  w.Micros(job.start - format.origin);
  w.Char('}');
}

// The hand-off arrows as flow v1 events after every job: "s" on a chain's
// first job, "t" on each one between, "f" with bp "e" on its last, each at
// its job's own "ts" text, on its row, in its category. Two viewers bind them:
//  - Perfetto (json_trace_parser, flow_tracker.cc) binds "s", "t" and "f"
//    with bp "e" to the slice open on the event's thread when the event is
//    read. Its sorter reads every "X" of a timestamp before any other event
//    of that timestamp (TraceSorter::SlowOperatorLess; file order when
//    nothing needs sorting, and these come after their jobs), and no two
//    slices of one row start together (AssignLanes): that slice is the job.
//  - Chrome DevTools (the trace engine's FlowsHandler) binds a flow event to
//    the event of equal cat, pid, tid and ts, and strings one flow's events
//    (same cat, name and id) together in file order: written in chain order.
// Not flow v2 (bind_id on the job): DevTools reads only v1, and Perfetto,
// given both, draws every arrow twice.
// Chain order is stage order: every pipeline's forward jobs on a chain stage
// by stage from the first, then its backward ones from the last stage down
// (as FlowChains paired them). Each stage's jobs are then read in their own
// order, in pieces of about this many jobs (a piece spans workers: at 2,048
// stages a worker has a few hundred) written on every thread, in order.
constexpr size_t kFlowPieceJobs = 1 << 12;

// A worker's jobs [first_job, last_job) whose arrows of one direction are written.
struct FlowSpan {
  int pid = 0;
  const WorkerRows* rows = nullptr;
  const Worker* worker = nullptr;
  std::span<const FlowMark> marks;
  size_t first_job = 0, last_job = 0;
  bool backward = false;  // the jobs of backward chains, else of forward ones
};

std::vector<FlowSpan> PlanFlowSpans(const Timeline& timeline, const FlowChains& flows, const std::vector<RowGroup>& groups) {
  std::unordered_map<const Worker*, std::pair<int, const WorkerRows*>> row_of;
  for (size_t g = 0; g < groups.size(); ++g)
    for (size_t w = 0; w < groups[g].workers.size(); ++w) row_of[groups[g].workers[w].second] = {GroupPid(g), &groups[g].rows[w]};
  const std::vector<PipelineChain> chains = PipelineChains(timeline);
  std::vector<FlowSpan> spans;
  for (const bool backward : {false, true})
    for (const PipelineChain& chain : chains)
      for (size_t k = 0; k < chain.stages.size(); ++k) {
        const Worker& worker = *chain.stages[backward ? chain.stages.size() - 1 - k : k].second;
        const std::span<const FlowMark> marks = flows.MarksOf(worker);
        const auto row = row_of.find(&worker);
        if (marks.empty() || row == row_of.end()) continue;
        for (size_t first = 0; first < marks.size(); first += kFlowPieceJobs)
          spans.push_back({row->second.first, row->second.second, &worker, marks, first,
                           std::min(marks.size(), first + kFlowPieceJobs), backward});
      }
  return spans;
}

void AppendFlowSpan(std::string& out, const FlowSpan& span, const JobFormat& format) {
  EventBuffer events(out);  // one for the span: an event is too short to append on its own
  RowPrefix row;
  for (size_t j = span.first_job; j < span.last_job; ++j) {
    const FlowMark mark = span.marks[j];
    if (mark.id == 0 || mark.backward != span.backward) continue;
    AppendFlowEvent(events, span.worker->jobs[j], mark, row.Of(span.pid, span.rows->Tid(j)), format);
  }
}

void AppendHandOffArrows(const Sink& sink, int threads, const Timeline& timeline, const FlowChains& flows,
                         const std::vector<RowGroup>& groups, const JobFormat& format) {
  const std::vector<FlowSpan> spans = PlanFlowSpans(timeline, flows, groups);
  std::vector<size_t> piece_starts;  // into spans: a piece is its spans up to the next one's first
  for (size_t i = 0, jobs = kFlowPieceJobs; i < spans.size(); ++i) {
    if (jobs >= kFlowPieceJobs) piece_starts.push_back(i), jobs = 0;
    jobs += spans[i].last_job - spans[i].first_job;
  }
  piece_starts.push_back(spans.size());
  WriteInOrder(piece_starts.size() - 1, threads, [&](size_t piece, std::string& out) {
    out.reserve(out.size() + kFlowPieceJobs * 40);  // a flow event is about 70 bytes, on half the jobs read
    for (size_t i = piece_starts[piece]; i < piece_starts[piece + 1]; ++i) AppendFlowSpan(out, spans[i], format);
  }, sink);
}

// The pieces, in order; counts the jobs and extra rows.
std::vector<Piece> PlanPieces(const std::vector<RowGroup>& groups, TraceStats* stats) {
  std::vector<Piece> pieces;
  for (size_t g = 0; g < groups.size(); ++g) {
    const RowGroup& group = groups[g];
    if (group.workers.empty()) pieces.push_back({g, 0, nullptr, nullptr, 0, 0, true});
    for (size_t w = 0; w < group.workers.size(); ++w) {
      const auto& [machine, worker] = group.workers[w];
      if (!group.what_if) {  // the run's own jobs and rows
        stats->overlap_lanes += static_cast<size_t>(group.rows[w].lane_count - 1);
        stats->jobs += worker->jobs.size();
      }
      size_t first = 0;
      do {
        const size_t last = std::min(worker->jobs.size(), first + kPieceJobs);
        pieces.push_back({g, machine, worker, &group.rows[w], first, last, w == 0 && first == 0});
        first = last;
      } while (first < worker->jobs.size());
    }
  }
  return pieces;
}

// The top-level "metadata" object, which Perfetto imports: the origin that
// every "ts" is relative to, the directory every "source" is relative to,
// and each machine's clock alignment. No
// "displayTimeUnit": Perfetto ignores it now, but some earlier trace
// processors read "ms" there as the unit of "ts" and "dur" (json_tracker.h).
std::string Trailer(const Timeline& timeline, const JobFormat& format) {
  std::string out = "\n],\n\"metadata\":";
  JsonMembers metadata(out);
  metadata.Int("trace_origin_ns", format.origin).String("trace_origin_utc", FormatUtc(format.origin));
  metadata.String("source_root", format.source_root);
  metadata.String("generator", "jobviz " JOBVIZ_VERSION).String("steps_from", StepSourceName(timeline.step_source));
  for (const Machine& machine : timeline.machines) {
    if (machine.clock_method.empty()) continue;
    char drift[32];
    std::snprintf(drift, sizeof drift, "%.3f", machine.clock_drift_ppm);
    metadata.String("clock " + machine.name, ClockText(machine)).String("clock_method " + machine.name, machine.clock_method);
    metadata.Int("clock_offset_ns " + machine.name, machine.clock_offset).Raw("clock_drift_ppm " + machine.name, drift);
  }
  metadata.Close();
  return out + "}\n";
}

}  // namespace

TraceStats WritePerfettoTrace(const Timeline& timeline, const Sink& sink, int threads, JsonArgs args,
                              const Bottleneck* bottleneck, const std::shared_future<FlowChains>* paired, const WhatIfRows* what_if) {
  TraceStats stats;
  EventStream events(sink, "{\"traceEvents\":[\n");
  const JobFormat format{TraceOrigin(timeline), SourceRoot(timeline), args};
  const CriticalPathView critical(timeline, bottleneck);
  std::vector<RowGroup> groups = LayOutRows(timeline, threads);
  if (what_if) AddWhatIfGroup(*what_if, &groups);
  AppendStepsProcess(events, timeline, format.origin, &stats);  // the first event: every piece after starts with ",\n"
  events.Flush();
  const size_t path_pieces = PathPieces(critical);
  const int path_tid = CriticalPathTid(groups);
  const std::vector<Piece> pieces = PlanPieces(groups, &stats);
  WriteInOrder(path_pieces + pieces.size(), threads, [&](size_t i, std::string& out) {
    if (i < path_pieces)
      AppendCriticalPathPiece(out, critical, i, path_tid, format.origin);
    else
      AppendPiece(out, timeline, groups, pieces[i - path_pieces], format, critical);
  }, sink);
  std::optional<FlowChains> own;
  const FlowChains& flows = paired ? paired->get() : own.emplace(timeline);  // only now: paired while the jobs were written
  AppendHandOffArrows(sink, threads, timeline, flows, groups, format);  // after every job: the viewers bind them so
  stats.flows = flows.hand_offs();
  AppendBusyCounter(sink, timeline, format.origin, threads);
  events.Finish(Trailer(timeline, format));
  return stats;
}

std::string EmitPerfettoJson(const FinishedRun& run, const Sink& sink) {
  const TraceStats stats = WritePerfettoTrace(run.timeline, sink, run.threads, run.json_args,
                                              run.marked_paths(), run.flows_to_come(), &run.what_if);
  if (stats.overlap_lanes == 0) return "";
  return " (" + std::to_string(stats.overlap_lanes) +
         (stats.overlap_lanes == 1 ? " extra row" : " extra rows") + " for overlapping jobs)";
}

}  // namespace jobviz
