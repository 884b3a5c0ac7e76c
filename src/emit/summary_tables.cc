#include "emit/summary_tables.h"

#include <algorithm>
#include <cstdio>

#include "model/time_value.h"

namespace jobviz {

namespace {

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

std::string EmitSummaryTables(const FinishedRun& run, const Sink& sink) {
  sink(SummaryTables(run.analysis));
  return "";
}

}  // namespace jobviz
