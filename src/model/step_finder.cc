#include "model/step_finder.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>

#include "read/parallel_for.h"

namespace jobviz {

namespace {

constexpr std::string_view kDefaultType = "default";

// Steps from NVTX push/pop pairs: each pop closes the latest open push, of a
// step or of a range the model named (those share the stack and never end a
// step); pops with none open are ignored (the framework pops ranges it never
// pushed).
void StepsFromNvtx(Worker& worker, SkipTally& skipped) {
  std::vector<std::optional<StepSpan>> open;  // nullopt: a named range
  for (const LogRecord& r : worker.markers) {
    if (r.kind == RecordKind::kStepPush) {
      open.push_back(StepSpan{r.step, r.start, r.start});
    } else if (r.kind == RecordKind::kRangePush) {
      open.push_back(std::nullopt);
    } else if (r.kind == RecordKind::kStepPop) {
      if (open.empty()) {
        skipped.Add({SkipReason::kUnmatchedStepPop, worker.file, r.line, 0, "",
                     "no step is open; ignored"});
        continue;
      }
      std::optional<StepSpan> span = open.back();
      open.pop_back();
      if (!span) continue;
      span->end = std::max(span->start, r.start);
      worker.steps.push_back(*span);
    }
  }
  // A push never popped (the log ends inside the step) reaches to its last job.
  for (const std::optional<StepSpan>& unclosed : open) {
    if (!unclosed) continue;
    StepSpan span = *unclosed;
    span.end = span.start;
    for (const Job& job : worker.jobs)
      if (job.start >= span.start) span.end = std::max(span.end, job.end);
    worker.steps.push_back(span);
  }
  std::sort(worker.steps.begin(), worker.steps.end(),
            [](const StepSpan& a, const StepSpan& b) { return a.start < b.start; });

  // A job belongs to the latest step pushed at or before its start. NVTX
  // times are host times at launch: with asynchronous streams the pop can
  // come before the step's jobs ran, so a step reaches to its last job.
  for (Job& job : worker.jobs) {
    const auto after = std::upper_bound(
        worker.steps.begin(), worker.steps.end(), job.start,
        [](Nanos t, const StepSpan& s) { return t < s.start; });
    if (after == worker.steps.begin()) continue;
    StepSpan& step = *std::prev(after);
    job.step = step.step;
    step.end = std::max(step.end, job.end);
  }
}

// The step named by the profiler window line that precedes the worker's
// first job, if its file has one: the log's own line (`cursor` false), or
// the one `jobviz follow` puts where it reads the file from (`cursor` true).
std::optional<std::int64_t> WindowFirstStep(const Worker& worker, bool cursor) {
  const std::uint64_t first_job_line =
      worker.jobs.empty() ? UINT64_MAX
                          : std::min_element(worker.jobs.begin(), worker.jobs.end(),
                                             [](const Job& a, const Job& b) {
                                               return a.line < b.line;
                                             })->line;
  std::optional<std::int64_t> first;
  for (const LogRecord& r : worker.markers)
    if (r.kind == RecordKind::kProfilerWindow && r.cursor == cursor && r.line < first_job_line) first = r.step;
  return first;
}

// The first step of the run: the window line of any of its files names it
// for every worker (the launcher prints it in some files only). Files that
// disagree are reported; the step most of them name wins (the lowest on a
// tie); 0 without any window line. Follow's cursor lines do not vote.
std::int64_t RunFirstStep(const std::vector<Worker*>& workers, std::vector<std::string>* warnings, int threads) {
  std::vector<std::optional<std::int64_t>> named(workers.size());
  ParallelFor(workers.size(), threads, [&](size_t w) { named[w] = WindowFirstStep(*workers[w], false); });
  std::map<std::int64_t, size_t> votes;
  for (const std::optional<std::int64_t>& first : named)
    if (first) ++votes[*first];
  if (votes.empty()) return 0;
  const auto winner = std::max_element(votes.begin(), votes.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
  if (votes.size() > 1) {
    std::string named;
    size_t listed = 0;
    for (const auto& [step, files] : votes) {
      if (++listed > 4) {  // the warning stays one short line at any scale
        named += ", " + std::to_string(votes.size() - 4) + " more steps";
        break;
      }
      named += (named.empty() ? "" : ", ") + ("step " + std::to_string(step)) + " in " + std::to_string(files) +
               (files == 1 ? " file" : " files");
    }
    warnings->push_back("profiler window lines disagree on the first step (" + named + "); steps count from step " +
                        std::to_string(winner->first));
  }
  return winner->first;
}

// The original tool's rule: in file order, the first job type other than
// "default" starts a step whenever its micro_batch_id is 0. Returns a reason
// when the rule cannot tell steps apart, or "" on success.
std::string StepsFromJobOrder(Worker& worker, std::int64_t first) {
  // The jobs in file order: their start order unless clocks or overlaps
  // reorder them (a worker's lines mostly come in start order: no sort then).
  std::vector<std::uint32_t> by_line(worker.jobs.size());
  std::iota(by_line.begin(), by_line.end(), 0u);
  const auto line_before = [&](std::uint32_t a, std::uint32_t b) { return worker.jobs[a].line < worker.jobs[b].line; };
  if (!std::is_sorted(by_line.begin(), by_line.end(), line_before)) std::sort(by_line.begin(), by_line.end(), line_before);

  const Job* marker = nullptr;
  bool any_later_micro_batch = false;
  size_t step_starts = 0;
  for (std::uint32_t i : by_line) {
    const Job& job = worker.jobs[i];
    if (!marker && job.type != kDefaultType) marker = &job;
    any_later_micro_batch |= job.micro_batch != 0;
  }
  if (worker.jobs.empty()) return "";
  if (!marker) return "every job is of type 'default'";
  const Name marker_type = marker->type;  // compared by index: a job is not a string compare
  for (std::uint32_t i : by_line)
    step_starts += worker.jobs[i].type == marker_type && worker.jobs[i].micro_batch == 0;
  if (!any_later_micro_batch && step_starts > 1)
    return "every micro_batch_id is 0, so each micro-batch looks like its own step";
  if (step_starts == 0)
    return "no step boundary was found (no '" + marker_type.str() + "' job has micro_batch_id = 0)";
  // Steps are numbered below 10^12 (a larger number is another run's, StepKey).
  if (first > kRunStride - static_cast<std::int64_t>(step_starts))
    return "the profiler window line's first step (" + std::to_string(first) + ") leaves no room for " +
           std::to_string(step_starts) + " steps below " + std::to_string(kRunStride);

  std::int64_t step = first - 1;
  for (std::uint32_t i : by_line) {
    Job& job = worker.jobs[i];
    if (job.type == marker_type && job.micro_batch == 0) ++step;
    // Jobs printed before the first marker job belong to the first step's block.
    job.step = std::max(step, first);
  }
  // The spans by step, after any the worker has already (of earlier runs).
  const size_t first_span = worker.steps.size();
  size_t last = first_span;
  for (const Job& job : worker.jobs) WidenStepSpan(worker.steps, first_span, last, job.step, job.start, job.end);
  return "";
}

bool HasNvtx(const Worker& worker) {
  return std::any_of(worker.markers.begin(), worker.markers.end(),
                     [](const LogRecord& r) { return r.kind == RecordKind::kStepPush; });
}

// What one worker's steps came from; found on any thread, reported in order.
struct WorkerSteps {
  bool nvtx = false;
  std::string failure;  // of the job-order rule
  SkipTally skipped;
};

// Steps of a timeline that holds one run. Each worker's steps depend on its
// own lines only (and the run's first step): one worker per thread at a time.
StepFinding FindStepsOfOneRun(Timeline& timeline, int threads) {
  StepFinding finding;
  const std::vector<Worker*> workers = AllWorkers(&timeline);
  const std::int64_t first_step = RunFirstStep(workers, &finding.warnings, threads);
  std::vector<WorkerSteps> found(workers.size());
  ParallelFor(workers.size(), threads, [&](size_t w) {
    Worker& worker = *workers[w];
    found[w].nvtx = HasNvtx(worker);
    if (found[w].nvtx)
      StepsFromNvtx(worker, found[w].skipped);
    else
      // Where follow reads a file from its cursor, the cursor numbers its
      // steps: the files' cursors need not meet at one step (a deleted log's
      // stays where its last job was), and a vote among them would
      // renumber the steps of the rest.
      found[w].failure = StepsFromJobOrder(worker, WindowFirstStep(worker, true).value_or(first_step));
  });
  size_t nvtx_workers = 0, heuristic_workers = 0;
  std::map<std::string, std::vector<std::string>> failures;  // reason -> workers
  for (size_t w = 0; w < workers.size(); ++w) {
    finding.skipped.Merge(found[w].skipped);
    if (found[w].nvtx)
      ++nvtx_workers;
    else if (found[w].failure.empty())
      heuristic_workers += !workers[w]->jobs.empty();
    else
      failures[found[w].failure].push_back(WorkerName(timeline, *workers[w]));
  }
  for (const auto& [reason, failed] : failures) {
    std::string names;
    for (size_t i = 0; i < failed.size() && i < 4; ++i) names += (i ? ", " : "") + failed[i];
    if (failed.size() > 4) names += ", ...";
    finding.warnings.push_back("no steps for " + std::to_string(failed.size()) +
                               (failed.size() == 1 ? " worker" : " workers") + " (" + names +
                               "): " + reason + "; jobs are drawn without steps");
  }

  // Merge across workers by step number: a step spans the earliest start to
  // the latest end of that step on any worker.
  std::map<std::int64_t, StepSpan> merged;
  std::map<size_t, size_t> step_counts;  // steps per worker -> workers
  for (const Machine& machine : timeline.machines) {
    for (const Worker& worker : machine.workers) {
      if (!worker.jobs.empty() || !worker.steps.empty()) ++step_counts[worker.steps.size()];
      for (const StepSpan& span : worker.steps) {
        auto [it, inserted] = merged.try_emplace(span.step, span);
        it->second.start = std::min(it->second.start, span.start);
        it->second.end = std::max(it->second.end, span.end);
      }
    }
  }
  for (const auto& [number, span] : merged) timeline.steps.push_back(span);
  if (step_counts.size() > 1 && !timeline.steps.empty()) {
    finding.warnings.push_back(std::string(kDifferentStepCounts) + " (" +
                               std::to_string(step_counts.begin()->first) + " to " +
                               std::to_string(step_counts.rbegin()->first) + ")");
  }

  if (nvtx_workers > 0) {
    timeline.step_source = StepSource::kNvtx;
    if (heuristic_workers > 0)
      finding.warnings.push_back(std::to_string(heuristic_workers) +
                                 (heuristic_workers == 1 ? " worker has" : " workers have") +
                                 " no NVTX step lines; steps there come from job order");
  } else if (heuristic_workers > 0) {
    timeline.step_source = StepSource::kHeuristic;
    // As in the original tool, a step does not start before the previous one
    // ends; the heuristic's edges are only as good as the job times. A step
    // that lies before the previous one (the clock was set back between
    // them) keeps its own span: clamped, it would hold none of its jobs.
    for (size_t i = 1; i < timeline.steps.size(); ++i) {
      StepSpan& step = timeline.steps[i];
      if (step.start >= timeline.steps[i - 1].start) step.start = std::min(std::max(step.start, timeline.steps[i - 1].end), step.end);
    }
  }
  return finding;
}

size_t RunOfLine(const Worker& worker, std::uint64_t line) {
  return static_cast<size_t>(std::upper_bound(worker.run_starts.begin(), worker.run_starts.end(), line) -
                             worker.run_starts.begin()) - 1;
}

// Run `run` of every worker (none where a file has fewer runs): its jobs
// moved out, its markers copied. A file of one run is run 1 (index 0).
Timeline TakeRun(Timeline& timeline, size_t run) {
  Timeline part;
  for (Machine& machine : timeline.machines) {
    Machine& to = part.machines.emplace_back(machine.name);
    for (Worker& worker : machine.workers) {
      Worker& w = to.workers.emplace_back();
      w.machine = worker.machine;
      w.index = worker.index;
      w.file = worker.file;
      if (worker.run_starts.empty() && run > 0) continue;
      for (Job& job : worker.jobs)
        if (worker.run_starts.empty() || RunOfLine(worker, job.line) == run) w.jobs.push_back(std::move(job));
      for (const LogRecord& marker : worker.markers)
        if (worker.run_starts.empty() || RunOfLine(worker, marker.line) == run) w.markers.push_back(marker);
    }
  }
  return part;
}

}  // namespace

// Several runs drawn (--run all): each run's steps are found on their own,
// named from that run's window line, and keyed apart (StepKey).
StepFinding FindSteps(Timeline& timeline, int threads) {
  size_t runs = 1;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) runs = std::max(runs, worker.run_starts.size());
  if (runs == 1) return FindStepsOfOneRun(timeline, threads);

  StepFinding finding;
  std::vector<Timeline> parts;
  for (size_t r = 0; r < runs; ++r) parts.push_back(TakeRun(timeline, r));
  for (Machine& machine : timeline.machines)
    for (Worker& worker : machine.workers) worker.jobs.clear();  // all moved into the parts
  for (size_t r = 0; r < runs; ++r) {
    Timeline& part = parts[r];
    StepFinding found = FindStepsOfOneRun(part, threads);
    finding.skipped.Merge(found.skipped);
    for (const std::string& warning : found.warnings) finding.warnings.push_back("run " + std::to_string(r + 1) + ": " + warning);
    const auto key = [r](std::int64_t step) { return step == kNoStep ? step : StepKey(static_cast<int>(r) + 1, step); };
    for (StepSpan& span : part.steps) timeline.steps.push_back({key(span.step), span.start, span.end});
    if (part.step_source == StepSource::kNvtx || timeline.step_source == StepSource::kNone)
      timeline.step_source = part.step_source;
    for (size_t m = 0; m < part.machines.size(); ++m)
      for (size_t w = 0; w < part.machines[m].workers.size(); ++w) {
        Worker& from = part.machines[m].workers[w];
        Worker& to = timeline.machines[m].workers[w];
        for (Job& job : from.jobs) {
          job.step = key(job.step);
          to.jobs.push_back(std::move(job));
        }
        for (const StepSpan& span : from.steps) to.steps.push_back({key(span.step), span.start, span.end});
      }
  }
  for (Machine& machine : timeline.machines)
    for (Worker& worker : machine.workers) std::sort(worker.jobs.begin(), worker.jobs.end(), StartsBefore);
  return finding;
}

}  // namespace jobviz
