#include "emit/perfetto_json.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "align/pipeline_order.h"
#include "analyse/analysis.h"
#include "emit/json_text.h"
#include "jobviz/version.h"
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
// "<name> <arg key>".
void AppendBusyCounter(EventStream& events, const Timeline& timeline, Nanos origin) {
  bool sampled = false;
  for (const CounterPoint& point : BusyWorkers(timeline, &sampled)) {
    JsonMembers event(events.Begin());
    event.Raw("name", "\"busy\"").Raw("ph", "\"C\"").Int("pid", kStepsPid).Micros("ts", point.at - origin);
    JsonMembers args(event.Object("args"));
    if (sampled) {
      char value[32];
      std::snprintf(value, sizeof value, "%.3f", point.value);
      args.Raw("workers", value);
    } else {
      args.Int("workers", static_cast<std::int64_t>(point.value));
    }
    args.Close();
    event.Close();
    events.End();
  }
}

void AppendStepsProcess(EventStream& events, const Timeline& timeline, Nanos origin, TraceStats* stats) {
  AppendMetadata(events.Begin(), kStepsPid, -1, "process_name", "name", "\"Steps\"");
  AppendMetadata(events.Begin(), kStepsPid, -1, "process_sort_index", "sort_index", "0");
  AppendMetadata(events.Begin(), kStepsPid, kStepsPid, "thread_name", "name", "\"Step\"");
  const std::string pid = std::to_string(kStepsPid);
  for (const StepSpan& step : timeline.steps) {
    AppendStepEvent(events.Begin(), step, pid, pid, true, origin);
    events.End();
    ++stats->steps;
  }
}

// The worker's rows (its own and one per overlap lane) and its jobs.
void AppendWorker(EventStream& events, int pid, const Machine& machine, const Worker& worker,
                  const FlowChains& flows, Nanos origin, int* next_tid, int* sort_index, TraceStats* stats) {
  int lane_count = 1;
  const std::vector<int> lanes = AssignLanes(worker.jobs, &lane_count);
  const int first_tid = *next_tid;
  *next_tid += lane_count;
  stats->overlap_lanes += lane_count - 1;
  for (int lane = 0; lane < lane_count; ++lane) {
    AppendMetadata(events.Begin(), pid, first_tid + lane, "thread_name", "name", JsonString(RowName(machine, worker, lane)));
    AppendMetadata(events.Begin(), pid, first_tid + lane, "thread_sort_index", "sort_index",
                   std::to_string((*sort_index)++));
  }
  const std::string pid_text = std::to_string(pid);
  for (size_t j = 0; j < worker.jobs.size(); ++j) {
    const JobEventStyle style{origin, flows.Of(worker, j)};
    AppendJobEvent(events.Begin(), worker, worker.jobs[j], pid_text, std::to_string(first_tid + lanes[j]), style);
    events.End();
    ++stats->jobs;
  }
}

// The top-level "metadata" object, which Perfetto imports: the origin that
// every "ts" is relative to, and each machine's clock alignment.
std::string Trailer(const Timeline& timeline, Nanos origin) {
  std::string out = "\n],\n\"displayTimeUnit\":\"ms\",\n\"metadata\":";
  JsonMembers metadata(out);
  metadata.Int("trace_origin_ns", origin).String("trace_origin_utc", FormatUtc(origin));
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

TraceStats WritePerfettoTrace(const Timeline& timeline, const Sink& sink) {
  TraceStats stats;
  EventStream events(sink, "{\"traceEvents\":[\n");
  const Nanos origin = TraceOrigin(timeline);
  const FlowChains flows(timeline);
  AppendStepsProcess(events, timeline, origin, &stats);
  int next_tid = kStepsPid + 1, sort_index = 0;
  for (size_t m = 0; m < timeline.machines.size(); ++m) {
    const Machine& machine = timeline.machines[m];
    const int pid = MachinePid(m);
    AppendMetadata(events.Begin(), pid, -1, "process_name", "name", JsonString(ProcessTitle(machine)));
    AppendMetadata(events.Begin(), pid, -1, "process_sort_index", "sort_index", std::to_string(m + 1));
    for (const Worker& worker : machine.workers)
      AppendWorker(events, pid, machine, worker, flows, origin, &next_tid, &sort_index, &stats);
  }
  stats.flows = flows.hand_offs();
  AppendBusyCounter(events, timeline, origin);
  events.Finish(Trailer(timeline, origin));
  return stats;
}

std::string EmitPerfettoJson(const FinishedRun& run, const Sink& sink) {
  const TraceStats stats = WritePerfettoTrace(run.timeline, sink);
  if (stats.overlap_lanes == 0) return "";
  return " (" + std::to_string(stats.overlap_lanes) +
         (stats.overlap_lanes == 1 ? " extra row" : " extra rows") + " for overlapping jobs)";
}

}  // namespace jobviz
