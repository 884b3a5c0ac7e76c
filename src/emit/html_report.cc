#include "emit/html_report.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "emit/html_timeline.h"
#include "write/json_text.h"
#include "emit/summary_tables.h"
#include "emit/trace_events.h"
#include "html_assets.h"
#include "jobviz/version.h"

namespace jobviz {

namespace {

// Nothing may load from anywhere: inline scripts and styles only. Opening
// ui.perfetto.dev is a navigation of another window, which this does not limit.
constexpr const char* kPolicy =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";

// Text the page shows: markup-safe, and no name in it can reorder the rest (BidiInert).
std::string HtmlText(const std::string& text) { return MarkupText(BidiInert(text)); }

std::string Table(const std::vector<std::vector<std::string>>& rows, bool gates) {
  std::string out = "<table class=\"summary\">\n<tr>";
  for (const std::string& cell : rows.front()) out += "<th>" + HtmlText(cell) + "</th>";
  out += "</tr>\n";
  for (size_t r = 1; r < rows.size(); ++r) {
    out += "<tr>";
    for (size_t c = 0; c < rows[r].size(); ++c) {
      const bool result = gates && c + 1 == rows[r].size();
      out += result ? "<td class=\"" + std::string(rows[r][c] == "passed" ? "passed" : "failed") + "\">" : "<td>";
      out += HtmlText(rows[r][c]) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

std::string Header(const FinishedRun& run, const std::vector<SummarySection>& sections, const HtmlTimeline& timeline) {
  std::string out = "<header>\n<h1>jobviz: pipeline report</h1>\n<p class=\"facts\">" +
                    std::to_string(run.jobs) + " jobs on " + std::to_string(run.analysis.workers.size()) +
                    " workers of " + std::to_string(run.timeline.machines.size()) + " machine" +
                    (run.timeline.machines.size() == 1 ? "" : "s") + " · " + std::to_string(run.read.files.size()) +
                    " files, " + std::to_string(run.read.lines) + " lines read, " +
                    std::to_string(run.skipped.total()) + " skipped · " + RunStartLine(run.timeline) + "</p>\n";
  // The verdict first: the gates a CI run passes or fails on, then the findings.
  if (!run.gates.empty()) {
    const bool failed = std::any_of(run.gates.begin(), run.gates.end(), [](const GateResult& g) { return !g.value || g.failed; });
    out += std::string("<p class=\"headline ") + (failed ? "gates-failed" : "gates-passed") + "\" id=\"gates\">" +
           HtmlText(GatesVerdict(run.gates)) + "</p>\n" + Table(GateRows(run.gates), true);
  }
  for (const SummarySection& section : sections)
    if (!section.text.empty()) out += "<p class=\"headline\">" + HtmlText(section.text) + "</p>\n";
  if (!timeline.window_note.empty()) out += "<p class=\"notice\" id=\"window\">" + HtmlText(timeline.window_note) + "</p>\n";
  out += "<p class=\"facts\"><a href=\"#terms\">What the words mean</a> (bubble, hand-off, stall, critical path, …)</p>\n";
  return out + "</header>\n";
}

constexpr const char* kTimeline = R"(<section>
<h2>Timeline</h2>
<div class="toolbar"><button type="button" id="open-perfetto">Open in Perfetto</button>
<span id="perfetto-status"></span>
<span class="hint">Ctrl/⌘+wheel, or wheel after a click into the timeline: zoom · shift+wheel, drag, A/D, ←/→: pan · W/S, +/−: zoom · 0: everything · click: details</span></div>
<div class="legend" id="legend"></div>
<div class="timeline" id="timeline" style="--row: 18px; --label-width: 230px">
<div class="head overview-row"><div class="labels"><div title="busy share of each machine's rows over the whole run; the box is what the rows below show; click or drag to go there">overview</div></div><div class="canvas-cell"><canvas class="overview"></canvas></div></div>
<div class="head"><div class="labels"><div>time</div><div>steps</div></div><div class="canvas-cell"><canvas class="head"></canvas></div></div>
<div class="scroller"><div class="inner"><div class="rows"></div><div class="canvas-cell"><canvas class="body"></canvas></div></div></div>
</div>
<noscript><p class="notice">The timeline needs JavaScript; the summary below does not.</p></noscript>
<div id="detail"></div>
</section>
)";

std::string Summary(const FinishedRun& run, const std::vector<SummarySection>& sections) {
  std::string out = "<section id=\"summary\">\n<h2>Summary</h2>\n";
  for (const SummarySection& section : sections) {
    if (section.rows.empty()) continue;
    out += "<h3>" + HtmlText(section.title) + "</h3>\n" + Table(ShownRows(section.rows), false);
    if (section.rows.size() > kShownRows + 1)
      out += "<details><summary>All " + std::to_string(section.rows.size() - 1) + " rows</summary>\n" +
             Table(section.rows, false) + "</details>\n";
  }
  // The glossary of docs/analysis.md, compiled in (src/emit/html/embed.py).
  out += "<h3 id=\"terms\">Terms</h3>\n" + std::string(kAsset_analysis_md);
  if (!run.warnings.empty()) {
    out += "<h3>Warnings</h3>\n<ul>\n";
    for (const std::string& warning : run.warnings) out += "<li>" + HtmlText(warning) + "</li>\n";
    out += "</ul>\n";
  }
  if (run.skipped.total() > 0) {
    std::vector<std::vector<std::string>> rows = {{"lines skipped", "count"}};
    for (size_t r = 0; r < static_cast<size_t>(SkipReason::kCount); ++r)
      if (const auto count = run.skipped.count(static_cast<SkipReason>(r)); count > 0)
        rows.push_back({SkipReasonText(static_cast<SkipReason>(r)), std::to_string(count)});
    out += "<h3>Lines not used</h3>\n" + Table(rows, false);
  }
  return out + "</section>\n";
}

// Who the stop report names (the first to stop and the stages that stopped
// with it, or the hedged suspect), by log file, for the page to mark their
// rows and go to them; the same sentence the header says.
std::string StopJson(const FinishedRun& run) {
  const StopReport& r = run.analysis.stop;
  nlohmann::json doc = {{"kind", StopKindKey(r.kind)}, {"sentence", r.sentence}, {"files", nlohmann::json::array()}};
  if ((r.kind == StopKind::kStopped || r.kind == StopKind::kSuspect) && r.first >= 0) {
    const std::vector<const Worker*> workers = AllWorkers(run.timeline);
    std::vector<int> lanes = {r.first};
    lanes.insert(lanes.end(), r.stopped_with.begin(), r.stopped_with.end());
    if (r.first_worker < workers.size()) doc["files"].push_back(workers[r.first_worker]->file);
    for (const int l : lanes)
      for (const std::uint32_t w : r.lanes[static_cast<size_t>(l)].workers)
        if (w < workers.size() && w != r.first_worker) doc["files"].push_back(workers[w]->file);
  }
  std::string text = doc.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  // Inside a <script> element: no "</" may close it early.
  for (size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 2)) text.replace(at, 2, "<\\/");
  return text;
}

}  // namespace

std::string EmitHtmlReport(const FinishedRun& run, const Sink& sink) {
  const HtmlTimeline timeline = BuildHtmlTimeline(run.timeline, run.html_max_jobs, "jobviz pipeline trace",
                                                  run.marked_paths(), &run.analysis.bottleneck, &run.what_if);
  const std::vector<SummarySection> sections = SummarySections(run.analysis, run.timeline);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta http-equiv=\"Content-Security-Policy\" content=\"" + std::string(kPolicy) + "\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                    "<meta name=\"generator\" content=\"jobviz " JOBVIZ_VERSION "\">\n"
                    "<link rel=\"icon\" href=\"data:,\">\n"
                    "<title>jobviz: pipeline report</title>\n<style>\n";
  out += kAsset_report_css;
  out += "</style>\n</head>\n<body>\n" + Header(run, sections, timeline) + kTimeline + Summary(run, sections);
  out += "<footer>Written by jobviz " JOBVIZ_VERSION ". Times are exact to the nanosecond of the logs; "
         "the summary is of the whole run.</footer>\n<div id=\"tip\"></div>\n";
  sink(out);
  out = "<script type=\"application/json\" id=\"jobviz-data\">";
  sink(out);
  sink(timeline.json);
  out = "</script>\n<script type=\"application/json\" id=\"jobviz-stop\">" + StopJson(run) +
        "</script>\n<script type=\"application/octet-stream\" id=\"jobviz-trace\">";
  sink(out);
  sink(timeline.trace_base64);
  out = "</script>\n<script>\n";
  out += kAsset_report_js;
  out += "</script>\n</body>\n</html>\n";
  sink(out);
  return " (HTML report" + (timeline.window_note.empty() ? std::string() : ", a window of the run: see the page") + ")";
}

}  // namespace jobviz
