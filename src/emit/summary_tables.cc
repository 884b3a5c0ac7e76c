#include "emit/summary_tables.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "analyse/cause_text.h"
#include "write/json_text.h"
#include "emit/stop_text.h"
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

// "forward 1.30x, backward 1.29x its tensor-parallel peers (24/24 and 24/24 jobs)"
std::string SlowText(const SlowWorker& w) {
  std::string factors, counts;
  for (const SlowJobType& t : w.types) {
    factors += (factors.empty() ? "" : ", ") + t.type + " " + FactorText(t.factor);
    counts += (counts.empty() ? "" : ", ") + std::to_string(t.slower) + "/" + std::to_string(t.jobs);
  }
  return factors + " " + w.compared_with + " (slower in " + counts + " jobs)";
}

// ": no worker is more than 4% slower than its peers (the slowest: machine1 worker 2, 1.04x)"
std::string SlowestText(const Analysis& a) {
  size_t slowest = a.workers.size();
  for (size_t w = 0; w < a.workers.size(); ++w)
    if (SpeedOf(a.bottleneck, w) > (slowest < a.workers.size() ? SpeedOf(a.bottleneck, slowest) : 0)) slowest = w;
  if (slowest == a.workers.size()) return "";
  const double speed = SpeedOf(a.bottleneck, slowest);
  const double more = std::max(1.0, std::ceil((speed - 1) * 100));
  return ": no worker is more than " + std::to_string(static_cast<int>(more)) + "% slower than its peers (the slowest: " +
         a.workers[slowest].name + ", " + FactorText(speed) + ")";
}

// The verdict, first: the bubble against its ideal, the causes ranked by
// what fixing them gains, the slow workers, and how far the replay can be trusted.
void AddVerdict(const Analysis& a, std::vector<SummarySection>* sections) {
  if (a.steps.empty() && a.stop.unfinished_steps > 0) {  // nothing finished to measure
    sections->push_back({"", "Pipeline bubble: not measured: the run finished no step", {}});
    return;
  }
  if (!a.verdict.empty()) sections->push_back({"", a.verdict, {}});
  sections->push_back({"", "Pipeline bubble: " + Percent(a.bubble_ratio) + " (" + IdealText(a) + ")", {}});
  const Bottleneck& b = a.bottleneck;
  if (!b.ran) return;
  if (b.causes.empty()) {
    sections->push_back({"", "Causes: none that removing would gain " + Percent(kCauseFloor) + " or more", {}});
  } else {
    for (size_t i = 0; i < b.causes.size(); ++i)
      sections->push_back({"", (i == 0 ? "Top cause: " : "Next cause: ") + b.causes[i].text, {}});
  }
  for (const SlowStage& s : b.slow_stages)
    sections->push_back({"", "Slow stage: stage " + std::to_string(s.stage) + " takes " + FactorText(s.factor) +
                                 " the other stages' time for the same jobs (an unbalanced split: move layers off it)", {}});
  if (a.slow_workers.empty()) {
    sections->push_back({"", b.per_worker_only ? "Slow workers: none to tell (no tensor-parallel peers or replicas to "
                                                 "compare with: a slow GPU shows as a slow stage)"
                                               : "Slow workers: none" + SlowestText(a), {}});
  } else {
    for (size_t i = 0; i < a.slow_workers.size() && i < 3; ++i)
      sections->push_back({"", "Slow worker: " + a.slow_workers[i].name + RoleLabel(a.slow_workers[i].role, a.topology) +
                                   ": " + SlowText(a.slow_workers[i]), {}});
    if (a.slow_workers.size() > 3)
      sections->push_back({"", "Slow workers: " + std::to_string(a.slow_workers.size() - 3) + " more (table below)", {}});
  }
  char error[32];
  std::snprintf(error, sizeof error, "%.2f%%", b.replay_error * 100.0);
  std::string trust = "Replay: the step graphs reproduce every measured step within " + std::string(error);
  if (b.replay_error > 0.01)
    trust = "Replay: off by up to " + std::string(error) + " on a step (" + std::to_string(b.overlaps) +
            " jobs start before their stage's previous job ended): the what-ifs are rough";
  if (b.contradicted > 0) trust += "; " + std::to_string(b.contradicted) + " hand-offs contradicted by the clocks left out";
  sections->push_back({"", trust, {}});
}

// Parts of the critical path that are large while no replay gains from
// removing them, and why: the path and the what-ifs tell one story.
std::vector<std::string> PathNotes(const Bottleneck& b) {
  std::vector<std::string> notes;
  const PathBreakdown& p = b.path;
  const double total = static_cast<double>(std::max<Nanos>(1, p.total()));
  const Nanos steps = static_cast<Nanos>(std::max<size_t>(1, b.steps));
  if (static_cast<double>(p.all_reduce) / total >= 0.05)
    notes.push_back("Note: the optimizers wait " + FormatDuration(p.all_reduce / steps) + " per step for the gradient all-reduce" +
                    (b.barrier_steps * 2 > b.steps ? " that every stage and replica joins (a global all-reduce, as gradient-norm "
                                                     "clipping makes it: every optimizer waits for the last backward anywhere)"
                                                   : " of their stage's replicas") +
                    ": communication after the pipeline, which no replay removes (faster collectives or overlapping them with "
                    "the last backward passes would)");
  const WhatIf* no_stall = nullptr;
  for (const WhatIf& w : b.what_if)
    if (w.kind == WhatIfKind::kNoStall) no_stall = &w;
  if (no_stall && static_cast<double>(p.stall) / total >= 0.10 && no_stall->gain < 0.01)
    notes.push_back("Note: stalls are " + Percent(static_cast<double>(p.stall) / total) +
                    " of the critical path, yet removing them saves " + FormatDuration(no_stall->saved) +
                    " per step: other chains of jobs, as long, end with the step");
  return notes;
}

// Where the critical paths' time goes, the what-if table and the slow workers.
void AddBottleneckSections(const Analysis& a, std::vector<SummarySection>* sections) {
  const Bottleneck& b = a.bottleneck;
  if (!b.ran) return;
  const PathBreakdown& p = b.path;
  const Nanos steps = static_cast<Nanos>(b.steps);
  const double total = static_cast<double>(std::max<Nanos>(1, p.total()));
  // The largest parts, the rest summed: a run of 2,048 stages has 6,000 compute parts.
  std::vector<std::pair<Nanos, std::string>> parts;
  for (const auto& c : p.compute) parts.emplace_back(c.time, "compute: stage " + std::to_string(c.stage) + " " + c.type);
  for (const auto& h : p.hand_offs)
    parts.emplace_back(h.time, "hand-off: stage " + std::to_string(h.from) + "→" + std::to_string(h.to) +
                                   (h.from < h.to ? " forward" : " backward"));
  parts.emplace_back(p.all_reduce, "gradient all-reduce (optimizers waiting)");
  parts.emplace_back(p.stall, "stall");
  parts.emplace_back(p.step_start, "step start");
  parts.emplace_back(p.step_gaps, "between steps");
  std::stable_sort(parts.begin(), parts.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  constexpr size_t kShown = 12;
  SummarySection path{"Critical path (per step, by cause)", "", {{"cause", "time per step", "share"}}};
  Nanos rest = 0;
  size_t rest_count = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].first <= 0) continue;
    if (path.rows.size() > kShown) {
      rest += parts[i].first;
      ++rest_count;
      continue;
    }
    path.rows.push_back({parts[i].second, FormatDuration(parts[i].first / steps), Percent(static_cast<double>(parts[i].first) / total)});
  }
  if (rest_count > 0)
    path.rows.push_back({std::to_string(rest_count) + " more", FormatDuration(rest / steps), Percent(static_cast<double>(rest) / total)});
  sections->push_back(std::move(path));
  for (const std::string& note : PathNotes(b)) sections->push_back({"", note, {}});
  SummarySection what_if{"What if (replays of the step graphs)", "", {{"change", "step time", "bubble", "saves per step", "gain"}}};
  // The replay with nothing removed: the row the others compare with.
  what_if.rows.push_back({"nothing (the measured steps, replayed)", FormatDuration(b.replayed_step),
                          Percent(b.replayed_bubble), "-", "-"});
  for (const WhatIf& w : b.what_if) {
    if (!w.applies) {
      what_if.rows.push_back({w.change, "-", "-", "-", "-"});
      continue;
    }
    what_if.rows.push_back({w.change, FormatDuration(w.step_time), Percent(w.bubble_ratio), FormatDuration(w.saved), Percent(w.gain)});
  }
  sections->push_back(std::move(what_if));
  if (!a.slow_workers.empty()) {
    SummarySection slow{"Slow workers", "", {{"worker", "slowest", "job types"}}};
    for (const SlowWorker& w : a.slow_workers) {
      slow.rows.push_back({w.name + RoleLabel(w.role, a.topology), FactorText(w.factor), SlowText(w)});
    }
    sections->push_back(std::move(slow));
  }
}

}  // namespace

std::vector<SummarySection> SummarySections(const Analysis& a, const Timeline& timeline) {
  std::vector<SummarySection> sections;
  // Where a run that did not finish stopped comes before anything measured.
  for (const std::string& line : StopVerdictLines(a.stop)) sections.push_back({"", line, {}});
  AddVerdict(a, &sections);
  if (auto rows = StopRows(a.stop, timeline); !rows.empty()) {
    sections.push_back({"Where the run stopped (first to stop first)", "", std::move(rows)});
    // At scale the rows past those shown, one line per cause (all formats
    // keep every row: the terminal's count, Markdown's and HTML's <details>).
    if (std::string folded = FoldedStopText(a.stop, kShownRows); !folded.empty())
      sections.push_back({"", std::move(folded), {}});
  }
  if (!a.steps.empty() && a.steps.front().step != kNoStep) {
    // Starts after the run start (RunStart), as the HTML ruler and tooltip count.
    const Nanos zero = RunStart(timeline);
    SummarySection steps{"Steps", "", {{"step", "duration", "start (after run start)"}}};
    for (const StepWindow& s : a.steps)
      steps.rows.push_back({StepColumn(s.step), FormatDuration(s.duration()), FormatSinceStart(SaturatingSub(s.start, zero))});
    sections.push_back(std::move(steps));
  }
  SummarySection workers{"Workers", "", {{"worker", "busy", "idle", "bubble", "speed"}}};
  std::vector<const WorkerAnalysis*> by_bubble;
  for (const WorkerAnalysis& w : a.workers) by_bubble.push_back(&w);
  if (by_bubble.size() > kShownRows) {  // what matters first once the table folds
    workers.title = "Workers (highest bubble first)";
    std::stable_sort(by_bubble.begin(), by_bubble.end(),
                     [](const WorkerAnalysis* x, const WorkerAnalysis* y) { return x->bubble_ratio > y->bubble_ratio; });
  }
  for (const WorkerAnalysis* w : by_bubble) {
    const double speed = SpeedOf(a.bottleneck, static_cast<size_t>(w - a.workers.data()));
    workers.rows.push_back({w->name + RoleLabel(w->role, a.topology), FormatDuration(w->busy), FormatDuration(w->idle),
                            Percent(w->bubble_ratio), speed > 0 ? FactorText(speed) : "-"});
  }
  sections.push_back(std::move(workers));
  if (a.topology.hybrid()) AddHybridSections(a, &sections);
  SummarySection types{"Job types", "", {{"job type", "count", "total", "mean", "p50", "p95"}}};
  for (const auto& [type, t] : a.job_types)
    types.rows.push_back({type, std::to_string(t.count), FormatDuration(t.total), FormatDuration(t.mean),
                          FormatDuration(t.p50), FormatDuration(t.p95)});
  sections.push_back(std::move(types));
  AddBottleneckSections(a, &sections);
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

std::vector<std::vector<std::string>> ShownRows(const std::vector<std::vector<std::string>>& rows) {
  if (rows.size() <= kShownRows + 1) return rows;
  return {rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(kShownRows) + 1};
}

std::string RunStartLine(const Timeline& timeline) {
  return "times after the run start, " + FormatUtcNanos(RunStart(timeline)) + " (its first step or job)";
}

std::string SummaryTables(const Analysis& a, const Timeline& timeline) {
  std::string out;
  for (const SummarySection& section : SummarySections(a, timeline)) {
    if (!section.text.empty()) out += section.text + "\n";
    if (section.rows.empty()) continue;
    if (section.title == "Steps") out += RunStartLine(timeline) + "\n";  // the verdict stays first
    out += section.title + "\n" + TextTable(ShownRows(section.rows));
    if (section.rows.size() > kShownRows + 1)
      out += "   ... " + std::to_string(section.rows.size() - 1 - kShownRows) +
             " more rows (--summary-json, --summary-md and --html have them all)\n";
  }
  return out;
}

std::string EmitSummaryTables(const FinishedRun& run, const Sink& sink) {
  sink(TerminalText(SummaryTables(run.analysis, run.timeline)));
  return "";
}

}  // namespace jobviz
