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

constexpr int kStepsPid = 1;  // machines follow from 2, in machine order

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

// "busy workers": how many workers run at least one job, at every change.
void AppendBusyCounter(EventStream& events, const Timeline& timeline) {
  std::vector<std::pair<Nanos, int>> changes;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) {
      std::vector<std::pair<Nanos, Nanos>> intervals;
      for (const Job& job : worker.jobs) intervals.emplace_back(job.start, job.end);
      for (const auto& [from, to] : MergeIntervals(std::move(intervals)))  // overlapping jobs count once
        changes.insert(changes.end(), {{from, +1}, {to, -1}});
    }
  std::sort(changes.begin(), changes.end());
  int busy = 0;
  for (size_t i = 0; i < changes.size();) {
    const Nanos at = changes[i].first;
    for (; i < changes.size() && changes[i].first == at; ++i) busy += changes[i].second;
    JsonMembers event(events.Begin());
    event.Raw("name", "\"busy workers\"").Raw("ph", "\"C\"").Int("pid", kStepsPid).Micros("ts", at);
    JsonMembers(event.Object("args")).Int("busy", busy).Close();
    event.Close();
    events.End();
  }
}

// Flow arrows along each hand-off (forward s -> s+1, backward s+1 -> s), so
// a stall can be followed to its cause. Each end sits mid-slice so the
// viewer binds it to that slice.
void AppendFlows(EventStream& events, const Timeline& timeline,
                 const std::unordered_map<const Job*, std::pair<int, int>>& where, TraceStats* stats) {
  std::uint64_t id = 0;
  ForEachHandOff(timeline, [&](const HandOff& h) {
    const auto from = where.find(h.sender);
    const auto to = where.find(h.receiver);
    if (from == where.end() || to == where.end()) return;
    ++id;
    const std::string name = "micro-batch " + std::to_string(h.sender->micro_batch);
    for (int end = 0; end < 2; ++end) {
      const Job& job = end == 0 ? *h.sender : *h.receiver;
      const auto [pid, tid] = end == 0 ? from->second : to->second;
      JsonMembers event(events.Begin());
      event.Raw("ph", end == 0 ? "\"s\"" : "\"f\"");
      if (end == 1) event.Raw("bp", "\"e\"");
      event.Int("id", static_cast<std::int64_t>(id)).String("name", name).Raw("cat", "\"flow\"");
      event.Int("pid", pid).Int("tid", tid).Micros("ts", job.start + (job.end - job.start) / 2);
      event.Close();
      events.End();
    }
    ++stats->flows;
  });
}

void AppendStepsProcess(EventStream& events, const Timeline& timeline, TraceStats* stats) {
  AppendMetadata(events.Begin(), kStepsPid, -1, "process_name", "name", "\"Steps\"");
  AppendMetadata(events.Begin(), kStepsPid, -1, "process_sort_index", "sort_index", "0");
  AppendMetadata(events.Begin(), kStepsPid, kStepsPid, "thread_name", "name", "\"Step\"");
  for (const StepSpan& step : timeline.steps) {
    AppendStepEvent(events.Begin(), step, std::to_string(kStepsPid), std::to_string(kStepsPid), true);
    events.End();
    ++stats->steps;
  }
}

// Machine-readable in the args, readable in Perfetto's process labels.
void AppendClockLabels(EventStream& events, int pid, const Machine& machine) {
  char drift[32];
  std::snprintf(drift, sizeof drift, "%.3f", machine.clock_drift_ppm);
  JsonMembers event(events.Begin());
  event.Raw("ph", "\"M\"").Int("pid", pid).Raw("name", "\"process_labels\"");
  JsonMembers args(event.Object("args"));
  args.String("labels", "clock " + machine.clock_method + " offset " + FormatMicros(machine.clock_offset) +
                            " us drift " + drift + " ppm");
  args.String("clock_method", machine.clock_method).Micros("clock_offset_us", machine.clock_offset);
  args.Raw("clock_drift_ppm", drift).Close();
  event.Close();
}

// Where each job was drawn, for the flow arrows: job -> (pid, tid).
using JobPlaces = std::unordered_map<const Job*, std::pair<int, int>>;

// The worker's rows (its own and one per overlap lane) and its jobs.
void AppendWorker(EventStream& events, int pid, const Machine& machine, const Worker& worker, int* next_tid,
                  int* sort_index, JobPlaces* where, TraceStats* stats) {
  int lane_count = 1;
  const std::vector<int> lanes = AssignLanes(worker.jobs, &lane_count);
  const int first_tid = *next_tid;
  *next_tid += lane_count;
  stats->overlap_lanes += lane_count - 1;
  for (int lane = 0; lane < lane_count; ++lane) {
    std::string name = machine.name + " worker " + std::to_string(worker.index);
    if (lane > 0) name += " overlap " + std::to_string(lane);
    AppendMetadata(events.Begin(), pid, first_tid + lane, "thread_name", "name", JsonString(name));
    AppendMetadata(events.Begin(), pid, first_tid + lane, "thread_sort_index", "sort_index",
                   std::to_string((*sort_index)++));
  }
  for (size_t j = 0; j < worker.jobs.size(); ++j) {
    const Job& job = worker.jobs[j];
    AppendJobEvent(events.Begin(), worker, job, std::to_string(pid), std::to_string(first_tid + lanes[j]));
    events.End();
    ++stats->jobs;
    (*where)[&job] = {pid, first_tid + lanes[j]};
  }
}

}  // namespace

TraceStats WritePerfettoTrace(const Timeline& timeline, const Sink& sink) {
  TraceStats stats;
  EventStream events(sink, "{\"traceEvents\":[\n");
  AppendStepsProcess(events, timeline, &stats);
  int next_tid = kStepsPid + 1, sort_index = 0;
  JobPlaces where;
  for (size_t m = 0; m < timeline.machines.size(); ++m) {
    const Machine& machine = timeline.machines[m];
    const int pid = kStepsPid + 1 + static_cast<int>(m);
    AppendMetadata(events.Begin(), pid, -1, "process_name", "name", JsonString(machine.name));
    if (!machine.clock_method.empty()) AppendClockLabels(events, pid, machine);
    AppendMetadata(events.Begin(), pid, -1, "process_sort_index", "sort_index", std::to_string(m + 1));
    for (const Worker& worker : machine.workers)
      AppendWorker(events, pid, machine, worker, &next_tid, &sort_index, &where, &stats);
  }
  AppendFlows(events, timeline, where, &stats);
  AppendBusyCounter(events, timeline);
  std::string trailer = "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"generator\":\"jobviz " JOBVIZ_VERSION "\",\"steps_from\":";
  AppendJsonString(trailer, StepSourceName(timeline.step_source));
  trailer += "}}\n";
  events.Finish(trailer);
  return stats;
}

std::string EmitPerfettoJson(const FinishedRun& run, const Sink& sink) {
  const TraceStats stats = WritePerfettoTrace(run.timeline, sink);
  if (stats.overlap_lanes == 0) return "";
  return " (" + std::to_string(stats.overlap_lanes) +
         (stats.overlap_lanes == 1 ? " extra row" : " extra rows") + " for overlapping jobs)";
}

}  // namespace jobviz
