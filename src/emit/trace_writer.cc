#include "emit/trace_writer.h"

#include "jobviz/version.h"
#include "analyse/analysis.h"
#include "emit/json_text.h"
#include "align/pipeline_order.h"

#include <algorithm>
#include <unordered_map>

#include <cstdio>


namespace jobviz {

namespace {

constexpr size_t kFlushBytes = 1 << 20;
constexpr int kStepsPid = 1;  // machines follow from 2, in machine order

// Appends events separated by ",\n" and hands full pieces to the sink.
class EventStream {
 public:
  EventStream(const TraceSink& sink, std::string_view header) : sink_(sink) { out_ = header; }
  std::string& Begin() {
    if (!first_) out_ += ",\n";
    first_ = false;
    return out_;
  }
  void End() {
    if (out_.size() >= kFlushBytes) {
      sink_(out_);
      out_.clear();
    }
  }
  void Finish(std::string_view trailer) {
    out_ += trailer;
    sink_(out_);
    out_.clear();
  }

 private:
  const TraceSink& sink_;
  std::string out_;
  bool first_ = true;
};

// Colour names of the original script; Chrome's viewer honours them.
const char* LegacyColour(std::string_view type) {
  if (type == "forward") return "thread_state_running";
  if (type == "backward") return "rail_idle";
  if (type == "optimizer") return "rail_response";
  if (type == "default") return "thread_state_unknown";
  return nullptr;
}

void AppendTimes(std::string& out, Nanos start, Nanos end) {
  out += ",\"ts\":";
  AppendMicros(out, start);
  out += ",\"dur\":";
  AppendMicros(out, end - start);
}

void AppendJobCore(std::string& out, const Job& job) {
  out += "\"name\":";
  AppendJsonString(out, job.type + "_" + job.id);
  out += ",\"cat\":";
  AppendJsonString(out, job.type);
  out += ",\"ph\":\"X\"";
}

void AppendJobArgs(std::string& out, const Worker& worker, const Job& job) {
  out += ",\"args\":{\"machine\":";
  AppendInt(out, worker.machine);
  out += ",\"worker\":";
  AppendInt(out, worker.index);
  out += ",\"type\":";
  AppendJsonString(out, job.type);
  out += ",\"job_id\":";
  AppendJsonString(out, job.id);
  out += ",\"micro_batch\":";
  AppendInt(out, job.micro_batch);
  out += ",\"step\":";
  AppendInt(out, job.step);
  out += ",\"source\":";
  AppendJsonString(out, worker.file + ":" + std::to_string(job.line));
  out += "}}";
}

void AppendMetadata(std::string& out, int pid, int tid, std::string_view what, std::string_view key,
                    const std::string& value_json) {
  out += "{\"ph\":\"M\",\"pid\":";
  AppendInt(out, pid);
  if (tid >= 0) {
    out += ",\"tid\":";
    AppendInt(out, tid);
  }
  out += ",\"name\":\"";
  out += what;
  out += "\",\"args\":{\"";
  out += key;
  out += "\":";
  out += value_json;
  out += "}}";
}

std::string JsonString(std::string_view text) {
  std::string s;
  AppendJsonString(s, text);
  return s;
}

std::string StepName(const StepSpan& step) { return "step" + std::to_string(step.step); }

std::string_view StepSourceName(StepSource source) {
  switch (source) {
    case StepSource::kNvtx: return "nvtx";
    case StepSource::kHeuristic: return "job order";
    case StepSource::kNone: break;
  }
  return "none";
}

}  // namespace

std::vector<int> AssignLanes(const std::vector<Job>& jobs, int* lane_count) {
  std::vector<Nanos> lane_end;  // when each lane becomes free
  std::vector<int> lanes;
  lanes.reserve(jobs.size());
  for (const Job& job : jobs) {
    size_t lane = 0;
    while (lane < lane_end.size() && lane_end[lane] > job.start) ++lane;
    if (lane == lane_end.size()) lane_end.push_back(job.end);
    lane_end[lane] = job.end;
    lanes.push_back(static_cast<int>(lane));
  }
  *lane_count = std::max<int>(1, static_cast<int>(lane_end.size()));
  return lanes;
}

// "busy workers": how many workers run at least one job, at every change.
void AppendBusyCounter(EventStream& events, const Timeline& timeline) {
  std::vector<std::pair<Nanos, int>> changes;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) {
      std::vector<std::pair<Nanos, Nanos>> intervals;
      for (const Job& job : worker.jobs) intervals.emplace_back(job.start, job.end);
      for (const auto& [from, to] : MergeIntervals(std::move(intervals)))  // overlapping jobs count once
        changes.insert(changes.end(), {{from, +1}, {to, -1}});
    }
  std::sort(changes.begin(), changes.end());
  int busy = 0;
  for (size_t i = 0; i < changes.size();) {
    const Nanos at = changes[i].first;
    for (; i < changes.size() && changes[i].first == at; ++i) busy += changes[i].second;
    std::string& out = events.Begin();
    out += "{\"name\":\"busy workers\",\"ph\":\"C\",\"pid\":";
    AppendInt(out, kStepsPid);
    out += ",\"ts\":";
    AppendMicros(out, at);
    out += ",\"args\":{\"busy\":";
    AppendInt(out, busy);
    out += "}}";
    events.End();
  }
}

// Flow arrows along each hand-off (forward s -> s+1, backward s+1 -> s), so
// a stall can be followed to its cause. Each end sits mid-slice so the
// viewer binds it to that slice.
void AppendFlows(EventStream& events, const Timeline& timeline,
                 const std::unordered_map<const Job*, std::pair<int, int>>& where, TraceStats* stats) {
  std::uint64_t id = 0;
  ForEachHandOff(timeline, [&](const HandOff& h) {
    const auto from = where.find(h.sender);
    const auto to = where.find(h.receiver);
    if (from == where.end() || to == where.end()) return;
    ++id;
    const std::string name = "micro-batch " + std::to_string(h.sender->micro_batch);
    for (int end = 0; end < 2; ++end) {
      const Job& job = end == 0 ? *h.sender : *h.receiver;
      const auto [pid, tid] = end == 0 ? from->second : to->second;
      std::string& out = events.Begin();
      out += end == 0 ? "{\"ph\":\"s\"" : "{\"ph\":\"f\",\"bp\":\"e\"";
      out += ",\"id\":";
      AppendInt(out, static_cast<std::int64_t>(id));
      out += ",\"name\":";
      AppendJsonString(out, name);
      out += ",\"cat\":\"flow\",\"pid\":";
      AppendInt(out, pid);
      out += ",\"tid\":";
      AppendInt(out, tid);
      out += ",\"ts\":";
      AppendMicros(out, job.start + (job.end - job.start) / 2);
      out += '}';
      events.End();
    }
    ++stats->flows;
  });
}

TraceStats WritePerfettoTrace(const Timeline& timeline, const TraceSink& sink) {
  TraceStats stats;
  EventStream events(sink, "{\"traceEvents\":[\n");
  int sort_index = 0;
  std::unordered_map<const Job*, std::pair<int, int>> where;  // job -> (pid, tid)

  AppendMetadata(events.Begin(), kStepsPid, -1, "process_name", "name", "\"Steps\"");
  AppendMetadata(events.Begin(), kStepsPid, -1, "process_sort_index", "sort_index", "0");
  AppendMetadata(events.Begin(), kStepsPid, kStepsPid, "thread_name", "name", "\"Step\"");
  for (const StepSpan& step : timeline.steps) {
    std::string& out = events.Begin();
    out += "{\"name\":";
    AppendJsonString(out, StepName(step));
    out += ",\"cat\":\"step\",\"ph\":\"X\",\"pid\":";
    AppendInt(out, kStepsPid);
    out += ",\"tid\":";
    AppendInt(out, kStepsPid);
    AppendTimes(out, step.start, step.end);
    out += ",\"args\":{\"step\":";
    AppendInt(out, step.step);
    out += "}}";
    events.End();
    ++stats.steps;
  }

  int next_tid = kStepsPid + 1;
  for (size_t m = 0; m < timeline.machines.size(); ++m) {
    const Machine& machine = timeline.machines[m];
    const int pid = kStepsPid + 1 + static_cast<int>(m);
    AppendMetadata(events.Begin(), pid, -1, "process_name", "name", JsonString(machine.name));
    if (!machine.clock_method.empty()) {
      // Machine-readable in the args, readable in Perfetto's process labels.
      std::string& out = events.Begin();
      out += "{\"ph\":\"M\",\"pid\":";
      AppendInt(out, pid);
      out += ",\"name\":\"process_labels\",\"args\":{\"labels\":";
      char drift[32];
      std::snprintf(drift, sizeof drift, "%.3f", machine.clock_drift_ppm);
      AppendJsonString(out, "clock " + machine.clock_method + " offset " + FormatMicros(machine.clock_offset) +
                                " us drift " + drift + " ppm");
      out += ",\"clock_method\":";
      AppendJsonString(out, machine.clock_method);
      out += ",\"clock_offset_us\":";
      AppendMicros(out, machine.clock_offset);
      out += ",\"clock_drift_ppm\":";
      out += drift;
      out += "}}";
    }
    AppendMetadata(events.Begin(), pid, -1, "process_sort_index", "sort_index",
                   std::to_string(m + 1));
    for (const Worker& worker : machine.workers) {
      int lane_count = 1;
      const std::vector<int> lanes = AssignLanes(worker.jobs, &lane_count);
      const int first_tid = next_tid;
      next_tid += lane_count;
      stats.overlap_lanes += lane_count - 1;
      for (int lane = 0; lane < lane_count; ++lane) {
        std::string name = machine.name + " worker " + std::to_string(worker.index);
        if (lane > 0) name += " overlap " + std::to_string(lane);
        AppendMetadata(events.Begin(), pid, first_tid + lane, "thread_name", "name",
                       JsonString(name));
        AppendMetadata(events.Begin(), pid, first_tid + lane, "thread_sort_index", "sort_index",
                       std::to_string(sort_index++));
      }
      for (size_t j = 0; j < worker.jobs.size(); ++j) {
        const Job& job = worker.jobs[j];
        std::string& out = events.Begin();
        out += '{';
        AppendJobCore(out, job);
        out += ",\"pid\":";
        AppendInt(out, pid);
        out += ",\"tid\":";
        AppendInt(out, first_tid + lanes[j]);
        AppendTimes(out, job.start, job.end);
        AppendJobArgs(out, worker, job);
        events.End();
        ++stats.jobs;
        where[&job] = {pid, first_tid + lanes[j]};
      }
    }
  }
  AppendFlows(events, timeline, where, &stats);
  AppendBusyCounter(events, timeline);
  std::string trailer = "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"generator\":\"jobviz " JOBVIZ_VERSION "\",\"steps_from\":";
  AppendJsonString(trailer, StepSourceName(timeline.step_source));
  trailer += "}}\n";
  events.Finish(trailer);
  return stats;
}

TraceStats WriteChromeTrace(const Timeline& timeline, const TraceSink& sink) {
  TraceStats stats;
  EventStream events(sink, "{\"traceEvents\":[\n");
  const bool multi_machine = timeline.machines.size() > 1;

  for (const StepSpan& step : timeline.steps) {
    std::string& out = events.Begin();
    out += "{\"name\":";
    AppendJsonString(out, StepName(step));
    out += ",\"cat\":\"step\",\"ph\":\"X\",\"pid\":0,\"tid\":\"Step\"";
    AppendTimes(out, step.start, step.end);
    out += '}';
    events.End();
    ++stats.steps;
  }
  for (size_t m = 0; m < timeline.machines.size(); ++m) {
    for (const Worker& worker : timeline.machines[m].workers) {
      int lane_count = 1;
      const std::vector<int> lanes = AssignLanes(worker.jobs, &lane_count);
      stats.overlap_lanes += lane_count - 1;
      std::string thread = "GPU" + std::to_string(worker.index);
      if (multi_machine) thread += "(machine:" + std::to_string(m) + ")";
      for (size_t j = 0; j < worker.jobs.size(); ++j) {
        const Job& job = worker.jobs[j];
        std::string& out = events.Begin();
        out += '{';
        AppendJobCore(out, job);
        out += ",\"pid\":0,\"tid\":";
        AppendJsonString(out, lanes[j] == 0 ? thread : thread + " overlap " + std::to_string(lanes[j]));
        AppendTimes(out, job.start, job.end);
        if (const char* colour = LegacyColour(job.type)) {
          out += ",\"cname\":\"";
          out += colour;
          out += '"';
        }
        AppendJobArgs(out, worker, job);
        events.End();
        ++stats.jobs;
      }
    }
  }
  events.Finish("\n]}\n");
  return stats;
}

std::string PerfettoTraceText(const Timeline& timeline) {
  std::string text;
  WritePerfettoTrace(timeline, [&](std::string_view piece) { text += piece; });
  return text;
}

std::string ChromeTraceText(const Timeline& timeline) {
  std::string text;
  WriteChromeTrace(timeline, [&](std::string_view piece) { text += piece; });
  return text;
}

}  // namespace jobviz
