#include "emit/chrome_json.h"

#include <algorithm>

#include "emit/event_buffer.h"
#include "write/json_text.h"
#include "model/open_jobs.h"

namespace jobviz {

namespace {

// Colour names of the original script (Chrome's viewer honours them; other
// types get none, as there).
const char* LegacyColour(std::string_view type) {
  if (type == "forward") return "thread_state_running";
  if (type == "backward") return "rail_idle";
  if (type == "optimizer") return "rail_response";
  if (type == "default") return "thread_state_unknown";
  return nullptr;
}
constexpr const char* kStepColour = "thread_state_unknown";

// One "B" or "E" event, members in the original's order.
void AppendEdge(std::string& out, std::string_view name, std::string_view category, char phase, Nanos time,
                std::string_view tid, const char* colour) {
  JsonMembers event(out);
  event.String("name", name).String("cat", category).Raw("ph", phase == 'B' ? "\"B\"" : "\"E\"");
  event.Micros("ts", time).Raw("pid", "0").String("tid", tid);
  if (colour) event.String("cname", colour);
  event.Close();
}

// A worker's "B"/"E" events, each written in one go from the parts that are
// the same for every job of the worker (its thread id) and of a type (the
// category and colour). A job whose type or id needs escaping goes through
// AppendEdge's general way instead, in the same bytes.
class LegacyEdgeWriter {
 public:
  explicit LegacyEdgeWriter(std::string tid) : tid_(std::move(tid)) {
    tail_ = ",\"pid\":0,\"tid\":";
    AppendJsonString(tail_, tid_);
  }
  // Both events of `job`, each after ",\n" unless it is the trace's first.
  void Append(std::string& out, const Job& job, bool first) {
    const std::string& type = job.type.str();
    const std::string& id = job.id.str();
    if (!IsPlainJson(type) || !IsPlainJson(id)) {
      const std::string name = JobName(job);
      for (const char phase : {'B', 'E'}) {
        if (!first) out += ",\n";
        first = false;
        AppendEdge(out, name, type, phase, phase == 'B' ? job.start : job.end, tid_, LegacyColour(type));
      }
      return;
    }
    const std::string& end = TypeEnd(job.type);
    for (const char phase : {'B', 'E'}) {
      EventBuffer w(out);
      if (!first) w.Lit(",\n");
      first = false;
      w.Lit("{\"name\":\"");
      w.Put(type);
      w.Char('_');
      w.Put(id);
      w.Lit("\",\"cat\":\"");
      w.Put(type);
      w.Lit("\",\"ph\":\"");
      w.Char(phase);
      w.Lit("\",\"ts\":");
      w.Micros(phase == 'B' ? job.start : job.end);
      w.Put(end);
    }
  }

 private:
  // ,"pid":0,"tid":"<tid>"[,"cname":"<colour>"]} for a type (plain, as checked above).
  const std::string& TypeEnd(Name type) {
    if (!type_known_ || type != type_) {
      type_end_ = tail_;
      if (const char* colour = LegacyColour(type.str())) {
        type_end_ += ",\"cname\":";
        AppendJsonString(type_end_, colour);
      }
      type_end_ += '}';
      type_ = type;
      type_known_ = true;
    }
    return type_end_;
  }

  std::string tid_, tail_, type_end_;
  Name type_;
  bool type_known_ = false;
};

// The jobs' events in pieces of at most kPieceJobs jobs of one worker,
// formatted on several threads and written in order.

struct EdgePiece {
  size_t machine = 0;
  const Worker* worker = nullptr;
  size_t first_job = 0, last_job = 0;
};

std::string LegacyTid(const Worker& worker, size_t machine, bool multi_machine) {
  std::string tid = "GPU" + std::to_string(worker.index);
  if (multi_machine) tid += "(machine:" + std::to_string(machine) + ")";
  return tid;
}

}  // namespace

TraceStats WriteChromeTrace(const Timeline& timeline, const Sink& sink) { return WriteChromeTrace(timeline, sink, 1); }

TraceStats WriteChromeTrace(const Timeline& timeline, const Sink& sink, int threads) {
  TraceStats stats;
  const bool multi_machine = timeline.machines.size() > 1;
  std::vector<EdgePiece> pieces;
  for (size_t m = 0; m < timeline.machines.size(); ++m)
    for (const Worker& worker : timeline.machines[m].workers)
      for (size_t first = 0; first < worker.jobs.size(); first += kPieceJobs)
        pieces.push_back({m, &worker, first, std::min(worker.jobs.size(), first + kPieceJobs)});
  sink("{\"traceEvents\":[\n");
  WriteInOrder(pieces.size(), threads, [&](size_t i, std::string& out) {
    const EdgePiece& piece = pieces[i];
    LegacyEdgeWriter edges(LegacyTid(*piece.worker, piece.machine, multi_machine));
    out.reserve(out.size() + (piece.last_job - piece.first_job) * 2 * 160);  // an event is ~140 bytes
    for (size_t j = piece.first_job; j < piece.last_job; ++j)
      edges.Append(out, piece.worker->jobs[j], /*first=*/i == 0 && j == piece.first_job);
  }, sink);
  for (const EdgePiece& piece : pieces) stats.jobs += piece.last_job - piece.first_job;
  std::string steps;
  bool first = pieces.empty();
  // Jobs begun and never ended (model/open_jobs.h), open to each log's end.
  for (size_t m = 0; m < timeline.machines.size(); ++m)
    for (const Worker& worker : timeline.machines[m].workers)
      for (const OpenSlice& slice : OpenSlices(worker))
        for (const char phase : {'B', 'E'}) {
          if (!first) steps += ",\n";
          first = false;
          AppendEdge(steps, OpenSliceName(*slice.job), "in_flight", phase, phase == 'B' ? slice.start : slice.end,
                     LegacyTid(worker, m, multi_machine), nullptr);
        }
  for (const StepSpan& step : timeline.steps) {
    const std::string name = StepSliceName(step);
    for (const char phase : {'B', 'E'}) {
      if (!first) steps += ",\n";
      first = false;
      AppendEdge(steps, name, "step", phase, phase == 'B' ? step.start : step.end, "Step", kStepColour);
    }
    ++stats.steps;
  }
  steps += "\n]}\n";
  sink(steps);
  return stats;
}

std::string EmitChromeJson(const FinishedRun& run, const Sink& sink) {
  WriteChromeTrace(run.timeline, sink, run.threads);
  return " (legacy Chrome trace)";
}

}  // namespace jobviz
