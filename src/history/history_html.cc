#include "history/history_html.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>

#include "history/history_text.h"
#include "write/json_text.h"

namespace jobviz {

namespace {

constexpr const char* kStyle = R"css(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 24px 0 8px; }
.note { color: #555; } .legend span { margin-right: 16px; white-space: nowrap; }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 5px; margin-right: 4px; }
svg { display: block; margin: 8px 0 16px; } svg text { font-size: 11px; fill: #555; }
svg .grid { stroke: #e4e4e4; } svg .line { fill: none; stroke-width: 1.5; }
svg a circle { stroke: #fff; stroke-width: 1; } svg a:hover circle { stroke: #000; }
svg .regressed { fill: none; stroke: #d00; stroke-width: 2; }
table { border-collapse: collapse; } th, td { padding: 3px 10px; text-align: right; border-bottom: 1px solid #eee; white-space: nowrap; }
th:first-child, td:first-child, td.text { text-align: left; } tr:target { background: #ffe9a8; }
td.bad { color: #c00; font-weight: 600; } td.runs { white-space: normal; text-align: left; min-width: 160px; } .bar { display: inline-block; height: 10px; background: #d55; }
)css";

constexpr const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"};

std::string Page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + MarkupText(title) +
         "</title><style>" + kStyle + "</style></head><body>\n" + body + "</body></html>\n";
}

// The series key: as given, else the first tag key whose value changes.
std::string PickSeries(const std::vector<HistoryLine>& lines, std::string series) {
  if (!series.empty()) return series;
  std::map<std::string, std::string> first;
  for (const HistoryLine& line : lines)
    for (const auto& [key, value] : line.run->record.tags) {
      const auto [it, inserted] = first.try_emplace(key, value);
      if (!inserted && it->second != value) return key;
    }
  return "name";
}

std::string SeriesOf(const RunRecord& r, const std::string& key) {
  if (key == "name") return r.name;
  const auto it = r.tags.find(key);
  return it == r.tags.end() ? "(none)" : it->second;
}

struct Chart {
  std::string title;
  std::function<std::optional<double>(const HistoryLine&)> value;
  std::function<bool(const HistoryLine&)> regressed;
  std::function<std::string(double)> text;
};

std::string Svg(const Chart& chart, const std::vector<HistoryLine>& lines, const std::vector<size_t>& series_of) {
  constexpr double kWidth = 960, kHeight = 220, kLeft = 60, kRight = 20, kTop = 20, kBottom = 30;
  double top = 0;
  for (const HistoryLine& line : lines) top = std::max(top, chart.value(line).value_or(0));
  top = top > 0 ? top * 1.1 : 1;
  const double step = lines.size() > 1 ? (kWidth - kLeft - kRight) / static_cast<double>(lines.size() - 1) : 0;
  const auto x = [&](size_t i) { return kLeft + step * static_cast<double>(i); };
  const auto y = [&](double v) { return kTop + (kHeight - kTop - kBottom) * (1 - v / top); };
  std::string svg = "<h2>" + MarkupText(chart.title) + "</h2>\n<svg width=\"" + FixedText(kWidth, 0) + "\" height=\"" +
                    FixedText(kHeight, 0) + "\" role=\"img\" aria-label=\"" + MarkupText(chart.title) + "\">\n";
  for (int tick = 0; tick <= 4; ++tick) {
    const double v = top * tick / 4;
    svg += "<line class=\"grid\" x1=\"" + FixedText(kLeft, 1) + "\" x2=\"" + FixedText(kWidth - kRight, 1) + "\" y1=\"" + FixedText(y(v), 1) +
           "\" y2=\"" + FixedText(y(v), 1) + "\"/><text x=\"4\" y=\"" + FixedText(y(v) + 4, 1) + "\">" + MarkupText(chart.text(v)) + "</text>\n";
  }
  std::map<size_t, std::string> paths;  // series -> its polyline's points
  for (size_t i = 0; i < lines.size(); ++i)
    if (const auto v = chart.value(lines[i])) paths[series_of[i]] += FixedText(x(i), 1) + "," + FixedText(y(*v), 1) + " ";
  for (const auto& [series, points] : paths)
    svg += "<polyline class=\"line\" stroke=\"" + std::string(kColors[series % 8]) + "\" points=\"" + points + "\"/>\n";
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto v = chart.value(lines[i]);
    if (!v) continue;
    const RunRecord& r = lines[i].run->record;
    const std::string id = std::to_string(lines[i].run->id);
    svg += "<a href=\"#run-" + id + "\"><circle cx=\"" + FixedText(x(i), 1) + "\" cy=\"" + FixedText(y(*v), 1) + "\" r=\"4\" fill=\"" +
           kColors[series_of[i] % 8] + "\"><title>#" + id + " " + MarkupText(LedgerTime(r.when())) +
           " " + MarkupText(r.name) + ": " + MarkupText(chart.text(*v)) + "</title></circle></a>";
    if (chart.regressed(lines[i]))
      svg += "<circle class=\"regressed\" cx=\"" + FixedText(x(i), 1) + "\" cy=\"" + FixedText(y(*v), 1) + "\" r=\"7\"/>";
    svg += "\n";
  }
  return svg + "</svg>\n";
}

std::string RunTable(const std::vector<HistoryLine>& lines) {
  std::string out = "<h2>Runs</h2>\n<table><tr><th>run</th><th>when (UTC)</th><th>name</th><th>tags</th><th>steps</th>"
                    "<th>step time</th><th>change</th><th>bubble</th><th>change</th><th>top cause</th><th>stopped</th></tr>\n";
  for (const HistoryLine& line : lines) {
    const RunRecord& r = line.run->record;
    std::string tags;
    for (const auto& [key, value] : r.tags) tags += (tags.empty() ? "" : ", ") + key + "=" + value;
    const std::string id = std::to_string(line.run->id);
    out += "<tr id=\"run-" + id + "\"><td>#" + id + "</td><td>" + MarkupText(LedgerTime(r.when())) +
           "</td><td class=\"text\">" + MarkupText(r.name) + "</td><td class=\"text\">" + MarkupText(tags) + "</td><td>" +
           std::to_string(r.steps) + "</td><td>" + FixedText(r.step_us / 1000, 2) + " ms</td><td" +
           (line.step_regressed ? " class=\"bad\">" : ">") +
           (line.step_change ? (*line.step_change >= 0 ? "+" : "") + FixedText(*line.step_change * 100, 1) + "%" : "") + "</td><td>" +
           FixedText(r.bubble * 100, 1) + "%</td><td" + (line.bubble_regressed ? " class=\"bad\">" : ">") +
           (line.bubble_change ? (*line.bubble_change >= 0 ? "+" : "") + FixedText(*line.bubble_change * 100, 1) + " pt" : "") +
           "</td><td class=\"text\" title=\"" + MarkupText(r.top_cause) + "\">" + MarkupText(r.top_what_if) +
           "</td><td class=\"text\">" + MarkupText(r.finished() ? "no" : r.stop_sentence) + "</td></tr>\n";
  }
  return out + "</table>\n";
}

std::string HostRows(const std::vector<HostLine>& lines, size_t top, const char* what) {
  double most = 0;
  for (const HostLine& line : lines) most = std::max(most, line.lost_us);
  std::string out = std::string("<h2>") + what + "</h2>\n<table><tr><th>" + what +
                    "</th><th>step time lost</th><th></th><th>slow</th><th>first to stop</th><th>runs</th><th>cause</th>"
                    "<th>slow in</th><th>stopped first in</th></tr>\n";
  size_t shown = 0;
  for (const HostLine& line : lines) {
    if (shown++ == top || (line.lost_us <= 0 && line.first_stop == 0 && line.slow == 0)) break;
    std::string runs, stops;
    for (std::int64_t id : line.slow_runs) runs += (runs.empty() ? "#" : ", #") + std::to_string(id);
    for (std::int64_t id : line.stop_runs) stops += (stops.empty() ? "#" : ", #") + std::to_string(id);
    out += "<tr><td>" + MarkupText(line.host + (line.gpu ? " gpu " + std::to_string(*line.gpu) : "")) + "</td><td>" +
           FixedText(line.lost_us / 1000, 2) + " ms</td><td class=\"text\"><span class=\"bar\" style=\"width:" +
           FixedText(most > 0 ? 160 * line.lost_us / most : 0, 0) + "px\"></span></td><td>" + std::to_string(line.slow) + "</td><td>" +
           std::to_string(line.first_stop) + "</td><td>" + std::to_string(line.runs) + "</td><td class=\"text\">" +
           MarkupText(SlowCauseText(line)) + "</td><td class=\"runs\">" + runs + "</td><td class=\"runs\">" + stops + "</td></tr>\n";
  }
  return out + "</table>\n";
}

}  // namespace

std::string HistoryHtml(const std::vector<HistoryLine>& lines, const HistoryOptions& options, std::string series,
                        const std::string& ledger) {
  series = PickSeries(lines, std::move(series));
  std::vector<std::string> values;  // the series' values, in order of first appearance
  std::vector<size_t> series_of;
  for (const HistoryLine& line : lines) {
    const std::string value = SeriesOf(line.run->record, series);
    const auto it = std::find(values.begin(), values.end(), value);
    series_of.push_back(static_cast<size_t>(it - values.begin()));
    if (it == values.end()) values.push_back(value);
  }
  std::string body = "<h1>jobviz history: " + MarkupText(ledger) + "</h1>\n<p class=\"note\">" + std::to_string(lines.size()) +
                     " runs; each beside the median of up to " + std::to_string(options.compare) +
                     " finished runs of its name before it; ringed: a regression (step time over +" +
                     FixedText(options.step_regression * 100, 0) + "%, bubble over +" + FixedText(options.bubble_regression * 100, 0) +
                     " pt). A point opens its run's line.</p>\n<p class=\"legend\">" + MarkupText(series) + ": ";
  for (size_t i = 0; i < values.size(); ++i)
    body += "<span><i style=\"background:" + std::string(kColors[i % 8]) + "\"></i>" + MarkupText(values[i]) + "</span>";
  body += "</p>\n";
  const auto has_steps = [](const HistoryLine& l) { return l.run->record.steps > 0; };
  body += Svg({"Step time (the median step)",
               [&](const HistoryLine& l) { return has_steps(l) ? std::optional(l.run->record.step_us / 1000) : std::nullopt; },
               [](const HistoryLine& l) { return l.step_regressed; }, [](double v) { return FixedText(v, 1) + " ms"; }},
              lines, series_of);
  body += Svg({"Bubble",
               [&](const HistoryLine& l) { return has_steps(l) ? std::optional(l.run->record.bubble * 100) : std::nullopt; },
               [](const HistoryLine& l) { return l.bubble_regressed; }, [](double v) { return FixedText(v, 1) + "%"; }},
              lines, series_of);
  return Page("jobviz history", body + RunTable(lines));
}

std::string HostsHtml(const HostLedger& ledger, size_t top, const std::string& path) {
  std::string body = "<h1>jobviz hosts: " + MarkupText(path) + "</h1>\n<p class=\"note\">" + std::to_string(ledger.runs) +
                     " runs: " + std::to_string(ledger.hosts.size()) + " hosts and " + std::to_string(ledger.gpus.size()) +
                     " GPUs were slow or stopped first. Step time lost: per step, summed over runs (each run's no-slow-workers what-if, shared among "
                     "its slow workers by how much slower each was). The job's: slow only at a job's stage that is slow in "
                     "most of that job's runs.</p>\n";
  return Page("jobviz hosts", body + HostRows(ledger.hosts, top, "host") + HostRows(ledger.gpus, top, "GPU"));
}

}  // namespace jobviz
