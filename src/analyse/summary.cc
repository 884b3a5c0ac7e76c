#include "analyse/summary.h"

#include <fstream>

namespace jobviz {

namespace {

double Micros(Nanos ns) { return static_cast<double>(ns) / 1000.0; }

// "run": N beside "step" for a step of one of several runs (--run all).
void AddRun(nlohmann::json& entry, std::int64_t step_key) {
  if (StepRun(step_key) > 0) entry["run"] = StepRun(step_key);
}

}  // namespace

nlohmann::json SummaryJson(const Analysis& a, const Timeline& timeline, const RunCounts& counts) {
  using nlohmann::json;
  json doc;
  doc["steps"] = json::array();
  for (const StepWindow& s : a.steps) {
    doc["steps"].push_back({{"step", StepNumber(s.step)}, {"start_us", Micros(s.start)}, {"end_us", Micros(s.end)},
                            {"start_ns", s.start}, {"end_ns", s.end}, {"duration_us", Micros(s.duration())}});
    AddRun(doc["steps"].back(), s.step);
  }
  doc["workers"] = json::array();
  for (const WorkerAnalysis& w : a.workers) {
    json steps = json::array();
    for (const WorkerStep& ws : w.steps)
    {
      steps.push_back({{"step", StepNumber(ws.step)}, {"busy_us", Micros(ws.busy)}, {"idle_us", Micros(ws.idle)}});
      AddRun(steps.back(), ws.step);
    }
    doc["workers"].push_back({{"machine", w.machine}, {"worker", w.worker}, {"name", w.name},
                              {"busy_us", Micros(w.busy)}, {"idle_us", Micros(w.idle)},
                              {"bubble_ratio", w.bubble_ratio}, {"steps", steps}});
  }
  doc["bubble_ratio"] = a.bubble_ratio;
  doc["ideal_bubble_ratio"] = a.schedule.ideal_bubble ? json(*a.schedule.ideal_bubble) : json(nullptr);
  doc["schedule"] = a.schedule.name;
  doc["model_chunks"] = a.schedule.chunks;
  if (!a.schedule.note.empty()) doc["schedule_note"] = a.schedule.note;
  doc["stages"] = a.stages;
  doc["micro_batches"] = a.micro_batches;
  doc["job_types"] = json::object();
  for (const auto& [type, t] : a.job_types)
    doc["job_types"][type] = {{"count", t.count}, {"total_us", Micros(t.total)}, {"mean_us", Micros(t.mean)},
                              {"p50_us", Micros(t.p50)}, {"p95_us", Micros(t.p95)}};
  doc["stragglers"] = json::array();
  for (const Straggler& s : a.stragglers) {
    doc["stragglers"].push_back({{"step", StepNumber(s.step)}, {"machine", s.machine}, {"worker", s.worker},
                                 {"name", s.name}, {"late_by_us", Micros(s.late_by)}});
    AddRun(doc["stragglers"].back(), s.step);
  }
  doc["clock"] = json::array();
  for (size_t m = 0; m < timeline.machines.size(); ++m) {
    const Machine& machine = timeline.machines[m];
    doc["clock"].push_back({{"machine", m}, {"name", machine.name}, {"offset_us", Micros(machine.clock_offset)},
                            {"drift_ppm", machine.clock_drift_ppm},
                            {"method", machine.clock_method.empty() ? "none" : machine.clock_method}});
  }
  doc["counts"] = {{"files", counts.files}, {"lines", counts.lines}, {"jobs", counts.jobs}, {"skipped", counts.skipped}};
  return doc;
}

}  // namespace jobviz

namespace jobviz {

const nlohmann::json& SummarySchema() {
  static const nlohmann::json schema = [] {
    Analysis one;
    one.steps.push_back({});
    one.workers.push_back({});
    one.workers.back().steps.push_back({});
    one.job_types[kAnyKey] = {};
    one.stragglers.push_back({});
    one.schedule.ideal_bubble = 0.0;
    Timeline timeline;
    timeline.machines.emplace_back();
    return SummaryJson(one, timeline, {});
  }();
  return schema;
}

}  // namespace jobviz

namespace jobviz {

std::optional<nlohmann::json> ReadSummaryFile(const std::string& path, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read it";
    return std::nullopt;
  }
  nlohmann::json summary = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (summary.is_discarded() || !summary.is_object()) {
    *error = "not a summary JSON (jobviz --summary-json)";
    return std::nullopt;
  }
  return summary;
}

}  // namespace jobviz
