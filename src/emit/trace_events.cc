#include "emit/trace_events.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <limits>
#include <mutex>
#include <optional>
#include <queue>

#include "analyse/analysis.h"
#include "emit/json_text.h"
#include "model/time_value.h"
#include "read/parallel_for.h"

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

std::vector<std::vector<WorkerRows>> NumberRows(const Timeline& timeline, int threads) {
  std::vector<std::vector<WorkerRows>> rows(timeline.machines.size());
  std::vector<std::pair<const Worker*, WorkerRows*>> all;
  for (size_t m = 0; m < timeline.machines.size(); ++m) {
    rows[m].resize(timeline.machines[m].workers.size());
    for (size_t w = 0; w < rows[m].size(); ++w) all.emplace_back(&timeline.machines[m].workers[w], &rows[m][w]);
  }
  ParallelFor(all.size(), threads, [&](size_t i) { all[i].second->lanes = AssignLanes(all[i].first->jobs, &all[i].second->lane_count); });
  int next_tid = kStepsPid + 1;
  for (auto& [worker, r] : all) {
    r->first_tid = next_tid;
    next_tid += r->lane_count;
  }
  return rows;
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

void EventStream::Flush() {
  sink_(out_);
  out_.clear();
}

void WriteInOrder(size_t count, int threads, const std::function<void(size_t, std::string&)>& make,
                  const Sink& sink) {
  std::vector<std::string> done(count);
  std::vector<bool> finished(count);
  std::mutex order;
  size_t next_to_write = 0;
  ParallelFor(count, threads, [&](size_t i) {
    std::string piece;
    make(i, piece);
    const std::lock_guard lock(order);
    done[i] = std::move(piece);
    finished[i] = true;
    for (; next_to_write < count && finished[next_to_write]; ++next_to_write) {
      sink(done[next_to_write]);
      std::string().swap(done[next_to_write]);
    }
  });
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

// One worker's busy spans (its jobs' union: overlapping or touching jobs
// count once, empty ones not at all) as +1/-1 changes in time order, read
// straight from its jobs, which are sorted by start.
class BusyCursor {
 public:
  explicit BusyCursor(const std::vector<Job>& jobs) : jobs_(jobs) { NextSpan(); }
  bool done() const { return done_; }
  Nanos at() const { return at_start_ ? from_ : to_; }
  int delta() const { return at_start_ ? +1 : -1; }
  void Advance() {
    if (at_start_) at_start_ = false;
    else NextSpan();
  }

 private:
  void NextSpan() {
    while (next_ < jobs_.size() && jobs_[next_].end <= jobs_[next_].start) ++next_;
    if (next_ == jobs_.size()) {
      done_ = true;
      return;
    }
    from_ = jobs_[next_].start;
    to_ = jobs_[next_].end;
    for (++next_; next_ < jobs_.size() && jobs_[next_].start <= to_; ++next_) to_ = std::max(to_, jobs_[next_].end);
    at_start_ = true;
  }

  const std::vector<Job>& jobs_;
  size_t next_ = 0;
  Nanos from_ = 0, to_ = 0;
  bool at_start_ = false, done_ = false;
};

// The time-weighted mean of the busy count over `buckets` equal spans of
// [first, last], fed one level at a time: it never holds the levels.
class Resampler {
 public:
  Resampler(Nanos first, Nanos last, size_t buckets)
      : last_(last),
        width_(std::max<Nanos>(1, (last - first + static_cast<Nanos>(buckets) - 1) / static_cast<Nanos>(buckets))),
        bucket_from_(first) {}

  // The count is `busy` from `at` until the next level.
  void Level(Nanos at, int busy) {
    if (has_level_) Span(level_at_, at, level_);
    level_at_ = at;
    level_ = busy;
    has_level_ = true;
  }
  std::vector<CounterPoint> Finish() {
    points_.push_back({last_, static_cast<double>(level_)});
    return std::move(points_);
  }

 private:
  void Span(Nanos from, Nanos until_at, int busy) {
    while (from < until_at && bucket_from_ < last_) {
      const Nanos bucket_to = std::min(last_, bucket_from_ + width_);
      const Nanos until = std::min(bucket_to, until_at);
      area_ += static_cast<double>(busy) * static_cast<double>(until - std::max(from, bucket_from_));
      from = until;
      if (until == bucket_to) {
        points_.push_back({bucket_from_, area_ / static_cast<double>(bucket_to - bucket_from_)});
        area_ = 0;
        bucket_from_ += width_;
      }
    }
  }

  Nanos last_, width_, bucket_from_;
  double area_ = 0;
  Nanos level_at_ = 0;
  int level_ = 0;
  bool has_level_ = false;
  std::vector<CounterPoint> points_;
};

}  // namespace

std::vector<CounterPoint> BusyWorkers(const Timeline& timeline, bool* sampled) {
  // The workers' changes merged in time order (a heap of one cursor per
  // worker), summed per instant: memory follows the workers, not the jobs.
  std::vector<BusyCursor> cursors;
  Nanos first = std::numeric_limits<Nanos>::max(), last = std::numeric_limits<Nanos>::min();
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) {
      for (const Job& job : worker.jobs)
        if (job.end > job.start) first = std::min(first, job.start), last = std::max(last, job.end);
      if (cursors.emplace_back(worker.jobs).done()) cursors.pop_back();  // no job with a length
    }
  using Next = std::pair<Nanos, size_t>;  // (time, cursor)
  std::priority_queue<Next, std::vector<Next>, std::greater<Next>> heap;
  for (size_t c = 0; c < cursors.size(); ++c) heap.emplace(cursors[c].at(), c);

  std::vector<CounterPoint> exact;
  std::optional<Resampler> resampler;
  int busy = 0;
  while (!heap.empty()) {
    const Nanos at = heap.top().first;
    while (!heap.empty() && heap.top().first == at) {
      const size_t c = heap.top().second;
      BusyCursor& cursor = cursors[c];
      heap.pop();
      busy += cursor.delta();
      cursor.Advance();
      if (!cursor.done()) heap.emplace(cursor.at(), c);
    }
    if (resampler) {
      resampler->Level(at, busy);
      continue;
    }
    exact.push_back({at, static_cast<double>(busy)});
    if (exact.size() > kMaxExactCounterPoints) {  // too many to draw one by one: switch to means
      resampler.emplace(first, last, kMaxExactCounterPoints - 1);
      for (const CounterPoint& point : exact) resampler->Level(point.at, static_cast<int>(point.value));
      std::vector<CounterPoint>().swap(exact);
    }
  }
  *sampled = resampler.has_value();
  return resampler ? resampler->Finish() : exact;
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
