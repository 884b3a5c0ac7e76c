#include "emit/chrome_json.h"

#include "emit/json_text.h"

namespace jobviz {

namespace {

// Colour names of the original script; Chrome's viewer honours them.
const char* LegacyColour(std::string_view type) {
  if (type == "forward") return "thread_state_running";
  if (type == "backward") return "rail_idle";
  if (type == "optimizer") return "rail_response";
  if (type == "default") return "thread_state_unknown";
  return nullptr;
}

void AppendWorkerJobs(EventStream& events, size_t machine, bool multi_machine, const Worker& worker,
                      TraceStats* stats) {
  int lane_count = 1;
  const std::vector<int> lanes = AssignLanes(worker.jobs, &lane_count);
  stats->overlap_lanes += lane_count - 1;
  std::string thread = "GPU" + std::to_string(worker.index);
  if (multi_machine) thread += "(machine:" + std::to_string(machine) + ")";
  for (size_t j = 0; j < worker.jobs.size(); ++j) {
    std::string tid;
    AppendJsonString(tid, lanes[j] == 0 ? thread : thread + " overlap " + std::to_string(lanes[j]));
    AppendJobEvent(events.Begin(), worker, worker.jobs[j], "0", tid, {0, LegacyColour(worker.jobs[j].type), {}});
    events.End();
    ++stats->jobs;
  }
}

}  // namespace

TraceStats WriteChromeTrace(const Timeline& timeline, const Sink& sink) {
  TraceStats stats;
  EventStream events(sink, "{\"traceEvents\":[\n");
  for (const StepSpan& step : timeline.steps) {
    AppendStepEvent(events.Begin(), step, "0", "\"Step\"", false);
    events.End();
    ++stats.steps;
  }
  for (size_t m = 0; m < timeline.machines.size(); ++m)
    for (const Worker& worker : timeline.machines[m].workers)
      AppendWorkerJobs(events, m, timeline.machines.size() > 1, worker, &stats);
  events.Finish("\n]}\n");
  return stats;
}

std::string EmitChromeJson(const FinishedRun& run, const Sink& sink) {
  WriteChromeTrace(run.timeline, sink);
  return " (legacy Chrome trace)";
}

}  // namespace jobviz
