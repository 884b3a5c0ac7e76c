#include "emit/html_timeline.h"

#include <zlib.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "write/json_text.h"
#include "emit/perfetto_proto.h"
#include "emit/trace_events.h"
#include "emit/html_shown.h"
#include "emit/what_if_rows.h"
#include "model/open_jobs.h"
#include "model/step_window.h"
#include "model/time_value.h"

namespace jobviz {

namespace {

// Logged times are rounded to the microsecond: an overlap this short is no
// second stream (analyse/step_graph.h, kTimeSlack, reads it the same way).
constexpr Nanos kRoundingOverlap = 5'000;

std::string Count(size_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

struct Window {
  std::function<bool(const Job&)> keep;  // empty: the whole run
  std::string note;
};

// The first whole steps that fit under `max_jobs` (at least one step), or,
// without steps, the earliest `max_jobs` jobs.
Window ChooseWindow(const Timeline& timeline, size_t max_jobs, size_t total) {
  if (total <= max_jobs) return {};
  const std::string cap = "the run has " + Count(total) + " jobs, more than the page holds (--html-max-jobs " +
                          Count(max_jobs) + "); the summary covers the whole run.";
  std::map<std::int64_t, size_t> per_step;  // empty also when no job has a step (NVTX steps after all jobs)
  if (!timeline.steps.empty())
    for (const Machine& machine : timeline.machines)
      for (const Worker& worker : machine.workers)
        for (const Job& job : worker.jobs)
          if (job.step != kNoStep) ++per_step[job.step];
  if (!per_step.empty()) {
    StepRange range{per_step.begin()->first, per_step.begin()->first};
    size_t shown = 0;
    for (const auto& [step, count] : per_step) {
      if (shown > 0 && shown + count > max_jobs) break;
      range.last = step;
      shown += count;
    }
    return {[range](const Job& job) { return job.step >= range.first && job.step <= range.last; },
            "The timeline shows " + StepName(range.first) + " to " + StepName(range.last) + " (" +
                Count(shown) + " jobs): " + cap + " Show other steps with --steps A:B."};
  }
  std::vector<Nanos> starts;
  starts.reserve(total);
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers)
      for (const Job& job : worker.jobs) starts.push_back(job.start);
  std::nth_element(starts.begin(), starts.begin() + static_cast<std::ptrdiff_t>(max_jobs) - 1, starts.end());
  const Nanos last_start = starts[max_jobs - 1];
  // Jobs that start together at the last start kept: as many as fit, in
  // machine, worker and start order (1,000 jobs of one start and a cap of
  // 10 keep 10, not all).
  const size_t earlier = static_cast<size_t>(std::count_if(starts.begin(), starts.end(), [&](Nanos s) { return s < last_start; }));
  auto tied = std::make_shared<std::unordered_set<const Job*>>();
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers)
      for (const Job& job : worker.jobs)
        if (job.start == last_start && earlier + tied->size() < max_jobs) tied->insert(&job);
  return {[last_start, tied](const Job& job) { return job.start < last_start || (job.start == last_start && tied->count(&job) > 0); },
          "The timeline shows the earliest " + Count(max_jobs) + " jobs by start time (no step boundaries were found): " + cap};
}

// A JSON string safe inside <script>: no "<" (so no "</script>").
void AppendScriptSafeString(std::string& out, std::string_view text) {
  const size_t from = out.size();
  // Every string the page shows: a name cannot reorder it (BidiInert; all
  // such controls begin with byte E2, rare in names and ids).
  if (text.find('\xe2') == std::string_view::npos) AppendJsonString(out, text);
  else AppendJsonString(out, BidiInert(text));
  for (size_t at = out.find('<', from); at != std::string::npos; at = out.find('<', at))
    out.replace(at, 1, "\\u003c");
}

// A row's jobs that never ended (model/open_jobs.h), when it has any:
// "open":[[start, end, name, note, line], ...], times after the origin.
void AppendOpenSlices(std::string& out, const Worker& worker, Nanos origin) {
  const std::vector<OpenSlice> slices = OpenSlices(worker);
  if (slices.empty()) return;
  out += ",\"open\":[";
  for (size_t i = 0; i < slices.size(); ++i) {
    out += i ? ",[" : "[";
    out += std::to_string(SaturatingSub(slices[i].start, origin)) + ',' + std::to_string(SaturatingSub(slices[i].end, origin)) + ',';
    AppendScriptSafeString(out, OpenSliceName(*slices[i].job));
    out += ',';
    AppendScriptSafeString(out, OpenSliceNote(*slices[i].job));
    out += ',' + std::to_string(slices[i].job->line) + ']';
  }
  out += ']';
}

bool IsSmallNumber(const std::string& text) {
  return !text.empty() && text.size() <= 15 && (text.size() == 1 || text[0] != '0') &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Columns of the job table, each a JSON array's contents.
struct JobColumns {
  std::string type, id, micro_batch, step, start, duration, line;
  bool first = true;

  void Add(const Job& job, int type_index, Nanos origin) {
    if (!first)
      for (std::string* column : {&type, &id, &micro_batch, &step, &start, &duration, &line}) *column += ',';
    first = false;
    AppendInt(type, type_index);
    if (IsSmallNumber(job.id)) id += job.id;
    else AppendScriptSafeString(id, job.id);
    AppendInt(micro_batch, job.micro_batch);
    AppendInt(step, job.step);
    AppendInt(start, SaturatingSub(job.start, origin));
    AppendInt(duration, SaturatingSub(job.end, job.start));
    AppendInt(line, static_cast<std::int64_t>(job.line));
  }
};

// "start":[...],"end":[...]: the spans' times after `origin`, in their order
// (the steps as measured, and as the what-if replays them).
std::string SpanColumns(const std::vector<std::pair<Nanos, Nanos>>& spans, Nanos origin) {
  std::string start, end;
  for (const auto& [from, to] : spans) {
    if (!start.empty()) start += ',', end += ',';
    AppendInt(start, SaturatingSub(from, origin));
    AppendInt(end, SaturatingSub(to, origin));
  }
  return "\"start\":[" + start + "],\"end\":[" + end + "]";
}

// The what-if's columns, in the job table's order: a job the replay did not
// move is drawn with no width where the one before it in its row ended (rows
// stay sorted by start and end, which the page's search relies on).
struct WhatIfColumns {
  std::string start, duration;
  Nanos row_end = 0;
  void Add(std::pair<Nanos, Nanos> time, Nanos origin) {
    if (time.first < 0) time = {row_end, row_end};
    if (!start.empty()) start += ',', duration += ',';
    AppendInt(start, SaturatingSub(time.first, origin));
    AppendInt(duration, time.second - time.first);
    row_end = time.second;
  }
};

std::string TimelineJson(const Timeline& timeline, const std::string& title, const ShownPaths* paths,
                         const ShownWhatIf* what_if) {
  const Nanos origin = TraceOrigin(timeline);
  std::string out = "{\"title\":";
  AppendScriptSafeString(out, title);
  // Times are ns after origin (a whole second, small integers); `zero` is the
  // run start, which the page counts every time it shows from.
  out += ",\"origin_utc\":\"" + FormatUtc(origin) + "\",\"origin_ns\":\"" + std::to_string(origin) + "\",\"zero\":" + std::to_string(SaturatingSub(RunStart(timeline), origin)) +
         ",\"trace_name\":\"jobviz.pftrace.gz\",\"machines\":[";
  // The row groups as the traces have them (machines, or stages under --rows stage).
  // Jobs that overlap the one before by a few microseconds (logged times
  // are rounded) stay on its row: the page draws them side by side, where
  // Perfetto, which needs slices to nest, gives them rows of their own.
  const std::vector<RowGroup> groups = LayOutRows(timeline, 1, kRoundingOverlap);
  for (size_t g = 0; g < groups.size(); ++g) {
    const Machine* machine = groups[g].machine >= 0 ? &timeline.machines[static_cast<size_t>(groups[g].machine)] : nullptr;
    if (g) out += ',';
    out += "{\"name\":";
    AppendScriptSafeString(out, machine ? machine->name : groups[g].title);
    out += ",\"clock\":";
    AppendScriptSafeString(out, machine ? ClockText(*machine) : "");  // a stage spans machines
    out += '}';
  }
  out += "],\"rows\":[";
  std::unordered_map<std::string, int> type_index;
  std::vector<const std::string*> types;
  JobColumns columns;
  WhatIfColumns what_if_columns;
  size_t next_job = 0;
  bool first_row = true;
  // Each worker's first index in machine-then-worker order, and where each of its jobs lands in the table.
  std::vector<size_t> first_worker;
  for (size_t m = 0, n = 0; m < timeline.machines.size(); n += timeline.machines[m].workers.size(), ++m) first_worker.push_back(n);
  std::vector<std::vector<std::uint32_t>> table_index;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) table_index.emplace_back(worker.jobs.size(), 0);
  for (size_t g = 0; g < groups.size(); ++g)
    for (size_t w = 0; w < groups[g].workers.size(); ++w) {
      const auto& [m, worker_in_group] = groups[g].workers[w];
      const Worker& worker = *worker_in_group;
      const WorkerRows& rows = groups[g].rows[w];
      std::vector<std::vector<const Job*>> by_lane(static_cast<size_t>(rows.lane_count));
      for (size_t j = 0; j < worker.jobs.size(); ++j) by_lane[static_cast<size_t>(rows.Lane(j))].push_back(&worker.jobs[j]);
      const size_t worker_index = first_worker[m] + static_cast<size_t>(&worker - timeline.machines[m].workers.data());
      for (int lane = 0; lane < rows.lane_count; ++lane) {
        const auto& lane_jobs = by_lane[static_cast<size_t>(lane)];
        if (!first_row) out += ',';
        first_row = false;
        out += "{\"machine\":" + std::to_string(g) + ",\"worker\":" + std::to_string(worker.index) +
               ",\"lane\":" + std::to_string(lane) + ",\"label\":";
        AppendScriptSafeString(out, RowName(timeline.machines[m], worker, lane, timeline.topology));
        out += ",\"file\":";
        AppendScriptSafeString(out, worker.file);
        out += ",\"first\":" + std::to_string(next_job) + ",\"count\":" + std::to_string(lane_jobs.size());
        if (lane == 0) AppendOpenSlices(out, worker, origin);
        out += '}';
        what_if_columns.row_end = lane_jobs.empty() ? 0 : lane_jobs.front()->start;
        for (const Job* const& job : lane_jobs) {
          table_index[worker_index][static_cast<size_t>(job - worker.jobs.data())] =
              static_cast<std::uint32_t>(next_job + static_cast<size_t>(&job - lane_jobs.data()));
          if (what_if) what_if_columns.Add(what_if->times[worker_index][static_cast<size_t>(job - worker.jobs.data())], origin);
          auto [it, added] = type_index.try_emplace(job->type, static_cast<int>(types.size()));
          if (added) types.push_back(&it->first);
          columns.Add(*job, it->second, origin);
        }
        next_job += lane_jobs.size();
      }
    }
  out += "],\"types\":[";
  for (size_t t = 0; t < types.size(); ++t) {
    if (t) out += ',';
    AppendScriptSafeString(out, *types[t]);
  }
  out += "],\"jobs\":{\"type\":[" + columns.type + "],\"id\":[" + columns.id + "],\"mb\":[" + columns.micro_batch +
         "],\"step\":[" + columns.step + "],\"start\":[" + columns.start + "],\"dur\":[" + columns.duration +
         "],\"line\":[" + columns.line + "]},\"steps\":{";
  std::string step, name;
  std::vector<std::pair<Nanos, Nanos>> spans;
  for (const StepSpan& span : timeline.steps) {
    const char* comma = step.empty() ? "" : ",";
    step += comma + std::to_string(span.step);
    name += comma;
    AppendScriptSafeString(name, StepSliceName(span));
    spans.emplace_back(span.start, span.end);
  }
  out += "\"step\":[" + step + "],\"name\":[" + name + "]," + SpanColumns(spans, origin) + "}";
  // The what-if's replay, which the page's switch draws instead of the measured times.
  if (what_if) {
    out += ",\"what_if\":{\"title\":";
    AppendScriptSafeString(out, what_if->title);
    out += ",\"start\":[" + what_if_columns.start + "],\"dur\":[" + what_if_columns.duration + "]";
    out += ",\"steps\":{" + SpanColumns(what_if->steps, origin) + "}}";  // in data.steps' order
  }
  // The critical paths: every job on one (each peer's), and each step's chain in time order.
  if (paths && !paths->paths.empty()) {
    std::vector<std::uint32_t> critical;
    for (size_t w = 0; w < paths->marked.size(); ++w)
      for (size_t j = 0; j < paths->marked[w].size(); ++j)
        if (paths->marked[w][j]) critical.push_back(table_index[w][j]);
    std::sort(critical.begin(), critical.end());
    out += ",\"critical\":[";
    for (size_t i = 0; i < critical.size(); ++i) out += (i ? "," : "") + std::to_string(critical[i]);
    out += "],\"path\":[";
    for (size_t p = 0; p < paths->paths.size(); ++p) {
      out += p ? ",[" : "[";
      for (size_t i = 0; i < paths->paths[p].size(); ++i)
        out += (i ? "," : "") + std::to_string(table_index[paths->paths[p][i].first][paths->paths[p][i].second]);
      out += ']';
    }
    out += ']';
  }
  return out + "}";
}

}  // namespace

std::string Base64(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const unsigned v = static_cast<unsigned char>(bytes[i]) << 16 | static_cast<unsigned char>(bytes[i + 1]) << 8 |
                       static_cast<unsigned char>(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out += kAlphabet[(v >> shift) & 63];
  }
  if (const size_t rest = bytes.size() - i; rest > 0) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (rest == 2) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string GzipBytes(std::string_view bytes) {
  z_stream stream{};
  // windowBits 15 + 16: a gzip header and trailer, as `gzip` writes.
  if (deflateInit2(&stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
  std::string out(deflateBound(&stream, bytes.size()) + 32, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return result == Z_STREAM_END ? out : std::string();
}

HtmlTimeline BuildHtmlTimeline(const Timeline& timeline, size_t max_jobs, const std::string& title,
                               const Bottleneck* bottleneck, const Bottleneck* what_if_from, const WhatIfRows* what_if_rows) {
  HtmlTimeline html;
  html.total_jobs = CountJobs(timeline);
  const Window window = ChooseWindow(timeline, std::max<size_t>(max_jobs, 1), html.total_jobs);
  Timeline windowed;
  if (window.keep) windowed = CopyJobsWhere(timeline, window.keep);
  const Timeline& shown = window.keep ? windowed : timeline;
  html.shown_jobs = CountJobs(shown);
  html.window_note = window.note;
  const bool marked = bottleneck && bottleneck->ran && !bottleneck->critical_paths.empty();
  const bool drawn = what_if_from && what_if_from->drawn_what_if;
  std::vector<std::vector<std::uint32_t>> original;  // the shown jobs' indices in the run
  if (marked || drawn) original = OriginalIndices(timeline, window.keep);
  // The critical paths in the shown jobs' terms (a window keeps whole steps).
  Bottleneck shown_bottleneck;
  ShownPaths paths;
  if (marked) {
    paths = MapPaths(shown, original, *bottleneck);
    shown_bottleneck.ran = true;
    for (const auto& worker_marks : paths.marked) {
      shown_bottleneck.marks.emplace_back();
      for (std::uint32_t j = 0; j < worker_marks.size(); ++j)
        if (worker_marks[j]) shown_bottleneck.marks.back().push_back(j);
    }
    for (const CriticalPathStep& step : bottleneck->critical_paths) {  // the steps the window keeps
      Job first;
      first.step = step.step;
      first.start = first.end = step.jobs.empty() ? step.start : step.jobs.front().start;
      if (!window.keep || window.keep(first)) shown_bottleneck.critical_paths.push_back(step);
    }
  }
  ShownWhatIf what_if;
  if (drawn) what_if = MapWhatIf(shown, original, *what_if_from);
  html.json = TimelineJson(shown, title, marked ? &paths : nullptr, drawn ? &what_if : nullptr);
  std::string trace;
  // The replay goes into the page's trace too when the page shows the whole run (a window's jobs are renumbered).
  WritePerfettoProto(shown, [&](std::string_view piece) { trace += piece; },
                     {.compress = false, .threads = 0, .bottleneck = marked ? &shown_bottleneck : nullptr,
                      .what_if = window.keep ? nullptr : what_if_rows});
  html.trace_base64 = Base64(GzipBytes(trace));
  return html;
}

}  // namespace jobviz
