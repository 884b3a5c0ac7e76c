#include "emit/trace_events.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <limits>

#include "analyse/analysis.h"
#include "emit/json_text.h"
#include "model/time_value.h"

namespace jobviz {

namespace {
constexpr size_t kFlushBytes = 1 << 20;
}  // namespace

std::string TraceText(TraceWriter write, const Timeline& timeline) {
  std::string text;
  write(timeline, [&](std::string_view piece) { text += piece; });
  return text;
}

std::string RowName(const Machine& machine, const Worker& worker, int lane) {
  std::string name = machine.name + " worker " + std::to_string(worker.index);
  if (lane > 0) name += " overlap " + std::to_string(lane);
  return name;
}

std::string& EventStream::Begin() {
  if (!first_) out_ += ",\n";
  first_ = false;
  return out_;
}

void EventStream::End() {
  if (out_.size() >= kFlushBytes) {
    sink_(out_);
    out_.clear();
  }
}

void EventStream::Finish(std::string_view trailer) {
  out_ += trailer;
  sink_(out_);
  out_.clear();
}

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

Nanos TraceOrigin(const Timeline& timeline) {
  Nanos earliest = std::numeric_limits<Nanos>::max();
  for (const StepSpan& step : timeline.steps) earliest = std::min(earliest, step.start);
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers)
      if (!worker.jobs.empty()) earliest = std::min(earliest, worker.jobs.front().start);
  if (earliest == std::numeric_limits<Nanos>::max()) return 0;
  constexpr Nanos kSecond = 1'000'000'000;
  const Nanos floor = earliest / kSecond * kSecond;  // rounds towards zero
  return floor > earliest ? floor - kSecond : floor;
}

namespace {

// Every change of the busy count, in time order: (time, busy from then on).
// One vector, sized up front and collapsed in place: at a million jobs it is
// the largest thing the trace writers hold besides the jobs.
std::vector<std::pair<Nanos, int>> BusyChanges(const Timeline& timeline) {
  std::vector<std::pair<Nanos, int>> changes;
  changes.reserve(2 * CountJobs(timeline));  // at most a start and an end per job
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) {
      std::vector<std::pair<Nanos, Nanos>> intervals;
      intervals.reserve(worker.jobs.size());
      for (const Job& job : worker.jobs) intervals.emplace_back(job.start, job.end);
      for (const auto& [from, to] : MergeIntervals(std::move(intervals)))  // overlapping jobs count once
        changes.insert(changes.end(), {{from, +1}, {to, -1}});
    }
  std::sort(changes.begin(), changes.end());
  size_t levels = 0;
  int busy = 0;
  for (size_t i = 0; i < changes.size();) {
    const Nanos at = changes[i].first;
    for (; i < changes.size() && changes[i].first == at; ++i) busy += changes[i].second;
    changes[levels++] = {at, busy};  // levels <= i: nothing unread is overwritten
  }
  changes.resize(levels);
  return changes;
}

// The time-weighted mean of a step function over `buckets` equal spans.
std::vector<CounterPoint> Resample(const std::vector<std::pair<Nanos, int>>& levels, size_t buckets) {
  const Nanos first = levels.front().first, last = levels.back().first;
  const Nanos width = std::max<Nanos>(1, (last - first + static_cast<Nanos>(buckets) - 1) / static_cast<Nanos>(buckets));
  std::vector<CounterPoint> points;
  size_t i = 0;
  for (Nanos from = first; from < last; from += width) {
    const Nanos to = std::min(last, from + width);
    double area = 0;
    Nanos at = from;
    while (i + 1 < levels.size() && levels[i + 1].first <= from) ++i;
    for (size_t k = i; k < levels.size() && levels[k].first < to; ++k) {
      const Nanos until = k + 1 < levels.size() ? std::min(to, levels[k + 1].first) : to;
      area += static_cast<double>(levels[k].second) * static_cast<double>(until - at);
      at = until;
    }
    points.push_back({from, area / static_cast<double>(to - from)});
  }
  points.push_back({last, static_cast<double>(levels.back().second)});
  return points;
}

}  // namespace

std::vector<CounterPoint> BusyWorkers(const Timeline& timeline, bool* sampled) {
  const auto levels = BusyChanges(timeline);
  *sampled = levels.size() > kMaxExactCounterPoints;
  if (*sampled) return Resample(levels, kMaxExactCounterPoints - 1);
  std::vector<CounterPoint> points;
  points.reserve(levels.size());
  for (const auto& [at, busy] : levels) points.push_back({at, static_cast<double>(busy)});
  return points;
}

std::string FormatUtc(Nanos time) {
  const std::time_t seconds = static_cast<std::time_t>(time / 1'000'000'000 - (time % 1'000'000'000 < 0 ? 1 : 0));
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string ClockText(const Machine& machine) {
  if (machine.clock_method == "reference") return "reference";
  if (machine.clock_method == "none") return "not aligned";
  char drift[48];
  std::snprintf(drift, sizeof drift, " us, drift %+.3f ppm", machine.clock_drift_ppm);
  return machine.clock_method + " " + (machine.clock_offset >= 0 ? "+" : "") + FormatMicros(machine.clock_offset) +
         drift;
}

std::string ProcessTitle(const Machine& machine) {
  if (machine.clock_method.empty()) return machine.name;
  return machine.name + " (clock " + ClockText(machine) + ")";
}

void AppendJobEvent(std::string& out, const Worker& worker, const Job& job, std::string_view pid,
                    std::string_view tid, const JobEventStyle& style) {
  JsonMembers event(out);
  event.String("name", JobName(job)).String("cat", job.type).Raw("ph", "\"X\"");
  event.Raw("pid", pid).Raw("tid", tid).Micros("ts", job.start - style.origin).Micros("dur", job.end - job.start);
  if (style.flow.id != 0) {
    event.Int("bind_id", style.flow.id);
    if (style.flow.in) event.Raw("flow_in", "true");
    if (style.flow.out) event.Raw("flow_out", "true");
  }
  JsonMembers args(event.Object("args"));
  args.Int("machine", worker.machine).Int("worker", worker.index).String("type", job.type);
  args.String("job_id", job.id).Int("micro_batch", job.micro_batch).Int("step", StepNumber(job.step));
  if (StepRun(job.step) > 0) args.Int("run", StepRun(job.step));
  args.String("source", worker.file + ":" + std::to_string(job.line));
  args.Close();
  event.Close();
}

void AppendStepEvent(std::string& out, const StepSpan& step, std::string_view pid, std::string_view tid,
                     bool step_arg, Nanos origin) {
  JsonMembers event(out);
  event.String("name", StepName(step.step)).Raw("cat", "\"step\"").Raw("ph", "\"X\"");
  event.Raw("pid", pid).Raw("tid", tid).Micros("ts", step.start - origin).Micros("dur", step.end - step.start);
  if (step_arg) {
    JsonMembers args(event.Object("args"));
    args.Int("step", StepNumber(step.step));
    if (StepRun(step.step) > 0) args.Int("run", StepRun(step.step));
    args.Close();
  }
  event.Close();
}

}  // namespace jobviz
