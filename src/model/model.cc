#include "model/model.h"

#include <algorithm>
#include <limits>

namespace jobviz {

std::string StepName(std::int64_t key) {
  const std::string step = "step" + std::to_string(StepNumber(key));
  return StepRun(key) > 0 ? "run" + std::to_string(StepRun(key)) + " " + step : step;
}

std::string StepSliceName(const StepSpan& span) {
  return span.unfinished ? StepName(span.step) + " (unfinished: the run stopped here)" : StepName(span.step);
}

const char* SkipReasonText(SkipReason reason) {
  switch (reason) {
    case SkipReason::kMalformedJob: return "malformed job line";
    case SkipReason::kMalformedWindow: return "malformed profiler window line";
    case SkipReason::kMalformedStepLine: return "malformed NVTX step line";
    case SkipReason::kMalformedClockSync: return "malformed clock sync line";
    case SkipReason::kEndBeforeStart: return "job ends before it starts";
    case SkipReason::kTimerNeverFired: return "never timed (job times 0.000000)";
    case SkipReason::kTruncatedLastLine: return "truncated last line";
    case SkipReason::kOverlongLine: return "line too long (cut)";
    case SkipReason::kUnmatchedStepPop: return "NVTX pop without a push";
    case SkipReason::kImplausibleDuration: return "job lasts longer than a day";
    case SkipReason::kMalformedTopology: return "malformed topology line";
    case SkipReason::kMalformedHeader: return "malformed libjobviz start line";
    case SkipReason::kBeyondLimits: return "job past jobviz's limits";
    case SkipReason::kCount: break;
  }
  return "?";
}

void SkipTally::Add(SkippedLine skipped) {
  const size_t r = static_cast<size_t>(skipped.reason);
  if (counts_[r]++ < kExamplesPerReason) examples_.push_back(std::move(skipped));
}

void SkipTally::Merge(const SkipTally& other) {
  for (size_t r = 0; r < counts_.size(); ++r) {
    size_t kept = counts_[r] < kExamplesPerReason ? kExamplesPerReason - counts_[r] : 0;
    for (const SkippedLine& example : other.examples_)
      if (static_cast<size_t>(example.reason) == r && kept > 0) {
        examples_.push_back(example);
        --kept;
      }
    counts_[r] += other.counts_[r];
  }
}

std::uint64_t SkipTally::total() const {
  std::uint64_t sum = 0;
  for (std::uint64_t c : counts_) sum += c;
  return sum;
}

std::vector<Worker*> AllWorkers(Timeline* timeline) {
  std::vector<Worker*> workers;
  for (Machine& machine : timeline->machines)
    for (Worker& worker : machine.workers) workers.push_back(&worker);
  return workers;
}

Nanos LastJobEnd(const Worker& worker) {
  Nanos last = 0;
  for (const Job& job : worker.jobs) last = std::max(last, job.end);
  return last;
}

std::vector<const Worker*> AllWorkers(const Timeline& timeline) {
  std::vector<const Worker*> workers;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) workers.push_back(&worker);
  return workers;
}

Nanos RunStart(const Timeline& timeline) {
  Nanos earliest = std::numeric_limits<Nanos>::max();
  for (const StepSpan& step : timeline.steps) earliest = std::min(earliest, step.start);
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers)
      if (!worker.jobs.empty()) earliest = std::min(earliest, worker.jobs.front().start);
  return earliest == std::numeric_limits<Nanos>::max() ? 0 : earliest;
}

std::string WorkerName(const Machine& machine, const Worker& worker) {
  return machine.name + " worker " + std::to_string(worker.index);
}

size_t CountJobs(const Timeline& timeline) {
  size_t jobs = 0;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) jobs += worker.jobs.size();
  return jobs;
}

std::string RunEndedBecause(const Timeline& timeline, std::int64_t last) {
  bool any_log = false, every_closed = true;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) {
      for (const LogRecord& marker : worker.markers)
        if (marker.kind == RecordKind::kProfilerWindow && marker.window_end_step >= 0 &&
            StepNumber(last) >= marker.window_end_step - 2)
          return "the profiling window's last";
      if (worker.jobs.empty()) continue;
      std::uint64_t last_job_line = 0;
      for (const Job& job : worker.jobs) last_job_line = std::max<std::uint64_t>(last_job_line, job.line);
      if (worker.end.training_completed_line > last_job_line)
        return "and " + worker.file + ":" + std::to_string(worker.end.training_completed_line) +
               " says 'Training completed'";
      any_log = true;
      every_closed &= worker.end.closed_line > last_job_line;
    }
  return any_log && every_closed ? "and every log ends with libjobviz's closing line" : "";
}

std::string_view WorkerHost(const Worker& worker) {
  for (auto it = worker.markers.rbegin(); it != worker.markers.rend(); ++it)
    if (it->kind == RecordKind::kProfilerHeader && !it->type.empty()) return it->type.str();
  return {};
}

}  // namespace jobviz
