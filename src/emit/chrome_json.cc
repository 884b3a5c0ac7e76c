#include "emit/chrome_json.h"

#include "emit/json_text.h"

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
void AppendEdge(EventStream& events, std::string_view name, std::string_view category, char phase, Nanos time,
                std::string_view tid, const char* colour) {
  JsonMembers event(events.Begin());
  event.String("name", name).String("cat", category).Raw("ph", phase == 'B' ? "\"B\"" : "\"E\"");
  event.Micros("ts", time).Raw("pid", "0").String("tid", tid);
  if (colour) event.String("cname", colour);
  event.Close();
  events.End();
}

}  // namespace

TraceStats WriteChromeTrace(const Timeline& timeline, const Sink& sink) {
  TraceStats stats;
  EventStream events(sink, "{\"traceEvents\":[\n");
  const bool multi_machine = timeline.machines.size() > 1;
  for (size_t m = 0; m < timeline.machines.size(); ++m)
    for (const Worker& worker : timeline.machines[m].workers) {
      std::string tid = "GPU" + std::to_string(worker.index);
      if (multi_machine) tid += "(machine:" + std::to_string(m) + ")";
      for (const Job& job : worker.jobs) {
        const std::string name = JobName(job);
        const char* colour = LegacyColour(job.type);
        AppendEdge(events, name, job.type, 'B', job.start, tid, colour);
        AppendEdge(events, name, job.type, 'E', job.end, tid, colour);
        ++stats.jobs;
      }
    }
  for (const StepSpan& step : timeline.steps) {
    const std::string name = StepName(step.step);
    AppendEdge(events, name, "step", 'B', step.start, "Step", kStepColour);
    AppendEdge(events, name, "step", 'E', step.end, "Step", kStepColour);
    ++stats.steps;
  }
  events.Finish("\n]}\n");
  return stats;
}

std::string EmitChromeJson(const FinishedRun& run, const Sink& sink) {
  WriteChromeTrace(run.timeline, sink);
  return " (legacy Chrome trace)";
}

}  // namespace jobviz
