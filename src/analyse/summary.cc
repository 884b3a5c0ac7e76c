#include "analyse/summary.h"

#include <algorithm>
#include <cstdio>

namespace jobviz {

namespace {

double Micros(Nanos ns) { return static_cast<double>(ns) / 1000.0; }

std::string Percent(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", ratio * 100.0);
  return buf;
}

// Left-aligned first column, right-aligned others, two spaces apart.
std::string Table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      line += "  " + (c == 0 ? row[c] + pad : pad + row[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace

nlohmann::json SummaryJson(const Analysis& a, const Timeline& timeline, const RunCounts& counts) {
  using nlohmann::json;
  json doc;
  doc["steps"] = json::array();
  for (const StepWindow& s : a.steps)
    doc["steps"].push_back({{"step", s.step}, {"start_us", Micros(s.start)}, {"end_us", Micros(s.end)},
                            {"duration_us", Micros(s.duration())}});
  doc["workers"] = json::array();
  for (const WorkerAnalysis& w : a.workers) {
    json steps = json::array();
    for (const WorkerStep& ws : w.steps)
      steps.push_back({{"step", ws.step}, {"busy_us", Micros(ws.busy)}, {"idle_us", Micros(ws.idle)}});
    doc["workers"].push_back({{"machine", w.machine}, {"worker", w.worker}, {"name", w.name},
                              {"busy_us", Micros(w.busy)}, {"idle_us", Micros(w.idle)},
                              {"bubble_ratio", w.bubble_ratio}, {"steps", steps}});
  }
  doc["bubble_ratio"] = a.bubble_ratio;
  doc["ideal_bubble_ratio"] = a.ideal_bubble_ratio;
  doc["stages"] = a.stages;
  doc["micro_batches"] = a.micro_batches;
  doc["job_types"] = json::object();
  for (const auto& [type, t] : a.job_types)
    doc["job_types"][type] = {{"count", t.count}, {"total_us", Micros(t.total)}, {"mean_us", Micros(t.mean)},
                              {"p50_us", Micros(t.p50)}, {"p95_us", Micros(t.p95)}};
  doc["stragglers"] = json::array();
  for (const Straggler& s : a.stragglers)
    doc["stragglers"].push_back({{"step", s.step}, {"machine", s.machine}, {"worker", s.worker},
                                 {"name", s.name}, {"late_by_us", Micros(s.late_by)}});
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

std::string SummaryTables(const Analysis& a) {
  std::string out;
  if (!a.steps.empty() && a.steps.front().step != kNoStep) {
    std::vector<std::vector<std::string>> rows = {{"step", "duration", "start (us since epoch)"}};
    for (const StepWindow& s : a.steps)
      rows.push_back({std::to_string(s.step), FormatDuration(s.duration()), FormatMicros(s.start)});
    out += "Steps\n" + Table(rows);
  }
  {
    std::vector<std::vector<std::string>> rows = {{"worker", "busy", "idle", "bubble"}};
    for (const WorkerAnalysis& w : a.workers)
      rows.push_back({w.name, FormatDuration(w.busy), FormatDuration(w.idle), Percent(w.bubble_ratio)});
    out += "Workers\n" + Table(rows);
  }
  out += "Pipeline bubble: " + Percent(a.bubble_ratio);
  if (a.stages > 0 && a.micro_batches > 0)
    out += " (ideal 1F1B for " + std::to_string(a.stages) + " stages and " + std::to_string(a.micro_batches) +
           " micro-batches: " + Percent(a.ideal_bubble_ratio) + ")";
  out += "\n";
  {
    std::vector<std::vector<std::string>> rows = {{"job type", "count", "total", "mean", "p50", "p95"}};
    for (const auto& [type, t] : a.job_types)
      rows.push_back({type, std::to_string(t.count), FormatDuration(t.total), FormatDuration(t.mean),
                      FormatDuration(t.p50), FormatDuration(t.p95)});
    out += "Job types\n" + Table(rows);
  }
  if (!a.stragglers.empty()) {
    std::vector<std::vector<std::string>> rows = {{"step", "last to finish", "after the median worker"}};
    for (const Straggler& s : a.stragglers)
      rows.push_back({std::to_string(s.step), s.name, FormatDuration(s.late_by)});
    out += "Stragglers\n" + Table(rows);
  }
  return out;
}

}  // namespace jobviz
