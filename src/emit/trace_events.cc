#include "emit/trace_events.h"

#include <algorithm>

#include "emit/json_text.h"

namespace jobviz {

namespace {
constexpr size_t kFlushBytes = 1 << 20;
}  // namespace

std::string TraceText(TraceWriter write, const Timeline& timeline) {
  std::string text;
  write(timeline, [&](std::string_view piece) { text += piece; });
  return text;
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

void AppendJobEvent(std::string& out, const Worker& worker, const Job& job, std::string_view pid,
                    std::string_view tid, const char* cname) {
  JsonMembers event(out);
  event.String("name", job.type + "_" + job.id).String("cat", job.type).Raw("ph", "\"X\"");
  event.Raw("pid", pid).Raw("tid", tid).Micros("ts", job.start).Micros("dur", job.end - job.start);
  if (cname) event.String("cname", cname);
  JsonMembers args(event.Object("args"));
  args.Int("machine", worker.machine).Int("worker", worker.index).String("type", job.type);
  args.String("job_id", job.id).Int("micro_batch", job.micro_batch).Int("step", job.step);
  args.String("source", worker.file + ":" + std::to_string(job.line));
  args.Close();
  event.Close();
}

void AppendStepEvent(std::string& out, const StepSpan& step, std::string_view pid, std::string_view tid,
                     bool step_arg) {
  JsonMembers event(out);
  event.String("name", "step" + std::to_string(step.step)).Raw("cat", "\"step\"").Raw("ph", "\"X\"");
  event.Raw("pid", pid).Raw("tid", tid).Micros("ts", step.start).Micros("dur", step.end - step.start);
  if (step_arg) JsonMembers(event.Object("args")).Int("step", step.step).Close();
  event.Close();
}

}  // namespace jobviz
