#include "emit/summary_tables.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "emit/trace_events.h"
#include "model/time_value.h"

namespace jobviz {

std::string Percent(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", ratio * 100.0);
  return buf;
}

// Left-aligned first column, right-aligned others, two spaces apart.
std::string TextTable(const std::vector<std::vector<std::string>>& rows) {
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

// Text as itself in GitHub-flavoured Markdown (which renders raw HTML): HTML's
// special characters as entities, Markdown's punctuation backslash-escaped,
// line breaks (which would end a table row) as spaces. Names come from
// directory names and summary files: a name is never markup.
std::string MarkdownCell(const std::string& text) {
  std::string cell;
  for (char c : text) {
    switch (c) {
      case '<': cell += "&lt;"; break;
      case '>': cell += "&gt;"; break;
      case '&': cell += "&amp;"; break;
      case '\n': case '\r': cell += ' '; break;
      case '\\': case '`': case '*': case '_': case '[': case ']': case '|': case '~': case '#': case '!':
        cell += '\\';
        cell += c;
        break;
      default: cell += c;
    }
  }
  return cell;
}

std::string MarkdownCode(const std::string& text, bool in_table) {
  // Backticks inside need a longer fence; a space pads content that starts
  // or ends with one. Inside a code span nothing else is markup, but a table
  // still ends a cell at '|' unless it is escaped (GFM strips the backslash).
  size_t longest = 0, run = 0;
  std::string content;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    if (c == '\n' || c == '\r') content += ' ';
    else if (c == '|' && in_table) content += "\\|";
    else content += c;
  }
  const std::string fence(longest + 1, '`');
  const bool pad = !content.empty() && (content.front() == '`' || content.back() == '`');
  return fence + (pad ? " " : "") + content + (pad ? " " : "") + fence;
}

// First column left-aligned, the figures right-aligned.
std::string MarkdownTable(const std::vector<std::vector<std::string>>& rows, const std::set<size_t>& code_columns) {
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    out += "|";
    for (size_t c = 0; c < rows[r].size(); ++c)
      out += " " + (r > 0 && code_columns.count(c) ? MarkdownCode(rows[r][c], true) : MarkdownCell(rows[r][c])) + " |";
    out += "\n";
    if (r == 0) {
      out += "|";
      for (size_t c = 0; c < rows[0].size(); ++c) out += c == 0 ? " --- |" : " ---: |";
      out += "\n";
    }
  }
  return out;
}

namespace {

// "3", or "run2 step3" under --run all with several runs.
std::string StepColumn(std::int64_t key) { return StepRun(key) > 0 ? StepName(key) : std::to_string(key); }

// "ideal for 1F1B with 4 stages and 6 micro-batches: 33.3%", or why there is none.
std::string IdealText(const Analysis& a) {
  const ScheduleFit& s = a.schedule;
  if (s.kind == ScheduleKind::kUnknown) return "schedule not recognised, no ideal known: " + s.note;
  std::string shape = std::to_string(a.stages) + " stages";
  if (s.chunks > 1) shape += ", " + std::to_string(s.chunks) + " chunks each";
  shape += " and " + std::to_string(a.micro_batches) + " micro-batches";
  if (!s.ideal_bubble) return s.name + " with " + shape + ", no ideal known: " + s.note;
  return "ideal for " + s.name + " with " + shape + ": " + Percent(*s.ideal_bubble);
}

// The sections only a hybrid topology has.
void AddHybridSections(const Analysis& a, std::vector<SummarySection>* sections) {
  sections->push_back({"", "Topology: " + DescribeTopology(a.topology), {}});
  SummarySection stages{"Stages", "", {{"stage", "workers", "forward mean", "forward p95", "backward mean", "backward p95",
                                        "busy", "idle", "bubble"}}};
  for (const StageAnalysis& s : a.stage_table)
    stages.rows.push_back({std::to_string(s.stage), std::to_string(s.workers), FormatDuration(s.forward.mean),
                           FormatDuration(s.forward.p95), FormatDuration(s.backward.mean), FormatDuration(s.backward.p95),
                           FormatDuration(s.busy), FormatDuration(s.idle), Percent(s.bubble_ratio)});
  sections->push_back(std::move(stages));
  if (a.topology.peer_degree() > 1) {
    if (a.lagging_peers.empty()) {
      sections->push_back({"", "Tensor-parallel peers: in lockstep (none behind its peers by more than " +
                                   FormatDuration(kPeerLagFloor) + " or 5% of a job)", {}});
    } else {
      SummarySection peers{"Tensor-parallel peers out of lockstep", "", {{"worker", "behind its peers (median)", "jobs"}}};
      for (const LaggingPeer& p : a.lagging_peers)
        peers.rows.push_back({p.name + RoleLabel(p.role, a.topology), FormatDuration(p.behind), std::to_string(p.jobs)});
      sections->push_back(std::move(peers));
    }
  }
  if (!a.last_replicas.empty()) {
    SummarySection replicas{"Replica last to finish (the one the gradient all-reduce waits for)", "",
                            {{"step", "replica", "after the median replica"}}};
    for (const LastReplica& r : a.last_replicas)
      replicas.rows.push_back({StepColumn(r.step), std::to_string(r.replica), FormatDuration(r.late_by)});
    sections->push_back(std::move(replicas));
  }
}

}  // namespace

std::vector<SummarySection> SummarySections(const Analysis& a, const Timeline& timeline) {
  std::vector<SummarySection> sections;
  if (!a.steps.empty() && a.steps.front().step != kNoStep) {
    SummarySection steps{"Steps", "", {{"step", "duration", "start (us since epoch)"}}};
    for (const StepWindow& s : a.steps)
      steps.rows.push_back({StepColumn(s.step), FormatDuration(s.duration()), FormatMicros(s.start)});
    sections.push_back(std::move(steps));
  }
  SummarySection workers{"Workers", "", {{"worker", "busy", "idle", "bubble"}}};
  for (const WorkerAnalysis& w : a.workers)
    workers.rows.push_back({w.name + RoleLabel(w.role, a.topology), FormatDuration(w.busy), FormatDuration(w.idle), Percent(w.bubble_ratio)});
  sections.push_back(std::move(workers));
  std::string bubble = "Pipeline bubble: " + Percent(a.bubble_ratio) + " (" + IdealText(a) + ")";
  sections.push_back({"", bubble, {}});
  if (a.topology.hybrid()) AddHybridSections(a, &sections);
  SummarySection types{"Job types", "", {{"job type", "count", "total", "mean", "p50", "p95"}}};
  for (const auto& [type, t] : a.job_types)
    types.rows.push_back({type, std::to_string(t.count), FormatDuration(t.total), FormatDuration(t.mean),
                          FormatDuration(t.p50), FormatDuration(t.p95)});
  sections.push_back(std::move(types));
  if (!a.stragglers.empty()) {
    SummarySection stragglers{"Stragglers", "", {{"step", "last to finish", "after the median worker"}}};
    for (const Straggler& s : a.stragglers)
      stragglers.rows.push_back({StepColumn(s.step), s.name, FormatDuration(s.late_by)});
    sections.push_back(std::move(stragglers));
  }
  if (timeline.machines.size() > 1) {
    SummarySection clocks{"Clock alignment", "", {{"machine", "method", "offset", "drift"}}};
    for (const Machine& m : timeline.machines) {
      char drift[32];
      std::snprintf(drift, sizeof drift, "%+.3f ppm", m.clock_drift_ppm);
      clocks.rows.push_back({m.name, m.clock_method.empty() ? "none" : m.clock_method, FormatDuration(m.clock_offset), drift});
    }
    sections.push_back(std::move(clocks));
  }
  return sections;
}

std::vector<std::vector<std::string>> GateRows(const std::vector<GateResult>& gates) {
  std::vector<std::vector<std::string>> rows = {{"gate", "value", "result"}};
  for (const GateResult& gate : gates)
    rows.push_back({gate.condition.text, gate.Message(), !gate.value ? "error" : gate.failed ? "FAILED" : "passed"});
  return rows;
}

std::string SummaryTables(const Analysis& a) {
  std::string out;
  for (const SummarySection& section : SummarySections(a, Timeline{})) {
    if (!section.text.empty()) out += section.text + "\n";
    if (!section.rows.empty()) out += section.title + "\n" + TextTable(section.rows);
  }
  return out;
}

std::string EmitSummaryTables(const FinishedRun& run, const Sink& sink) {
  sink(SummaryTables(run.analysis));
  return "";
}

}  // namespace jobviz
