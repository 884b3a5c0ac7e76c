#include "emit/html_timeline.h"

#include <zlib.h>

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>

#include "emit/json_text.h"
#include "emit/perfetto_proto.h"
#include "emit/trace_events.h"
#include "model/step_window.h"
#include "model/time_value.h"

namespace jobviz {

namespace {

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
  return {[last_start](const Job& job) { return job.start <= last_start; },
          "The timeline shows the earliest " + Count(max_jobs) + " jobs by start time (no step boundaries were found): " + cap};
}

// A JSON string safe inside <script>: no "<" (so no "</script>").
void AppendScriptSafeString(std::string& out, std::string_view text) {
  const size_t from = out.size();
  AppendJsonString(out, text);
  for (size_t at = out.find('<', from); at != std::string::npos; at = out.find('<', at))
    out.replace(at, 1, "\\u003c");
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

std::string TimelineJson(const Timeline& timeline, const std::string& title) {
  const Nanos origin = TraceOrigin(timeline);
  std::string out = "{\"title\":";
  AppendScriptSafeString(out, title);
  out += ",\"origin_utc\":\"" + FormatUtc(origin) + "\",\"trace_name\":\"jobviz.pftrace.gz\",\"machines\":[";
  // The row groups as the traces have them (machines, or stages under --rows stage).
  const std::vector<RowGroup> groups = LayOutRows(timeline, 1);
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
  size_t next_job = 0;
  bool first_row = true;
  for (size_t g = 0; g < groups.size(); ++g)
    for (size_t w = 0; w < groups[g].workers.size(); ++w) {
      const auto& [m, worker_in_group] = groups[g].workers[w];
      const Worker& worker = *worker_in_group;
      const WorkerRows& rows = groups[g].rows[w];
      std::vector<std::vector<const Job*>> by_lane(static_cast<size_t>(rows.lane_count));
      for (size_t j = 0; j < worker.jobs.size(); ++j) by_lane[static_cast<size_t>(rows.lanes[j])].push_back(&worker.jobs[j]);
      for (int lane = 0; lane < rows.lane_count; ++lane) {
        const auto& lane_jobs = by_lane[static_cast<size_t>(lane)];
        if (!first_row) out += ',';
        first_row = false;
        out += "{\"machine\":" + std::to_string(g) + ",\"worker\":" + std::to_string(worker.index) +
               ",\"lane\":" + std::to_string(lane) + ",\"label\":";
        AppendScriptSafeString(out, RowName(timeline.machines[m], worker, lane, timeline.topology));
        out += ",\"file\":";
        AppendScriptSafeString(out, worker.file);
        out += ",\"first\":" + std::to_string(next_job) + ",\"count\":" + std::to_string(lane_jobs.size()) + '}';
        for (const Job* job : lane_jobs) {
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
  std::string step, name, start, end;
  for (const StepSpan& span : timeline.steps) {
    const char* comma = step.empty() ? "" : ",";
    step += comma + std::to_string(span.step);
    name += comma;
    AppendScriptSafeString(name, StepName(span.step));
    start += comma + std::to_string(SaturatingSub(span.start, origin));
    end += comma + std::to_string(SaturatingSub(span.end, origin));
  }
  out += "\"step\":[" + step + "],\"name\":[" + name + "],\"start\":[" + start + "],\"end\":[" + end + "]}}";
  return out;
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

HtmlTimeline BuildHtmlTimeline(const Timeline& timeline, size_t max_jobs, const std::string& title) {
  HtmlTimeline html;
  html.total_jobs = CountJobs(timeline);
  const Window window = ChooseWindow(timeline, std::max<size_t>(max_jobs, 1), html.total_jobs);
  Timeline windowed;
  if (window.keep) windowed = CopyJobsWhere(timeline, window.keep);
  const Timeline& shown = window.keep ? windowed : timeline;
  html.shown_jobs = CountJobs(shown);
  html.window_note = window.note;
  html.json = TimelineJson(shown, title);
  std::string trace;
  WritePerfettoProto(shown, [&](std::string_view piece) { trace += piece; });
  html.trace_base64 = Base64(GzipBytes(trace));
  return html;
}

}  // namespace jobviz
