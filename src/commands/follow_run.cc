#include "commands/follow_run.h"

#include "analyse/analysis.h"
#include "analyse/fail_on.h"
#include "cli/report.h"
#include "commands/stages.h"
#include "emit/flow_chains.h"

namespace jobviz {

bool BuildFollowedRun(const DrawPlan& plan, const FollowedSource& tree, FollowedBuild what,
                      const std::vector<ClockJump>& jumps, FinishedRun* run, std::string* messages) {
  MessageCapture capture;
  int status = 0;
  run->html_max_jobs = plan.html_max_jobs;
  run->json_args = plan.json_args;
  run->summary_workers = plan.summary_workers;
  run->threads = plan.inputs.threads;
  bool ok = !tree.logs().files.empty() && BuildRun(tree.logs(), tree.Scans(what == FollowedBuild::kSteps || what == FollowedBuild::kStalled, plan.inputs.threads), plan.run, run, &status);
  AlignOptions align;
  ok = ok && ResolveNames(plan, &run->timeline, &align, &status) && PlaceWorkers(plan, run, &status);
  if (ok) {
    run->timeline.rows_by_stage = plan.rows_by_stage;
    align.known_jumps = jumps;
    AlignRunClocks(align, run);
    // A turn needs only the steps: every worker with a job past a step has
    // finished it, whatever the stop report would say of the last ones.
    if (what == FollowedBuild::kSteps) {
      FindStepsOnly(run);
    } else {
      // The stall alarm knows what --hung says: no job finished for --stall-after.
      run->stop_options = plan.stop;
      run->stop_options.hung |= what == FollowedBuild::kStalled || what == FollowedBuild::kWholeStalled;
      FindRunSteps(run);
    }
  }
  *messages = capture.text();
  return ok;
}

namespace {

// The step after `last`: the next one found, or its number plus one.
std::int64_t NextStep(const Timeline& timeline, std::int64_t last) {
  for (const StepSpan& span : timeline.steps)
    if (span.step > last) return span.step;
  return last + 1;
}

}  // namespace

bool WriteFollowedOutputs(const DrawPlan& plan, const FollowedSource& tree, const std::vector<ClockJump>& jumps,
                          std::optional<StepRange> shown, std::string* messages, std::string* live_report) {
  FinishedRun run;
  // Without a window of shown steps the stall alarm has been raised: what it knows, the outputs say.
  const FollowedBuild what = shown ? FollowedBuild::kWhole : FollowedBuild::kWholeStalled;
  if (!BuildFollowedRun(plan, tree, what, jumps, &run, messages) || run.jobs == 0) return false;
  MessageCapture capture;
  int status = 0;
  if (shown) {
    if (run.timeline.steps.empty() || run.timeline.steps.front().step > shown->last) return false;
    const std::int64_t first = shown->first == kNoStep ? run.timeline.steps.front().step : shown->first;
    if (!CutSteps(StepRange{first, shown->last}, &run, &status)) {
      *messages += capture.text();
      return false;
    }
  }
  // Before the stall alarm the run is running: its last step is in progress, not stopped.
  if (shown && run.analysis.stop.kind != StopKind::kFinished)
    run.analysis.stop = RunningReport(NextStep(run.timeline, shown->last));
  AnalyseRun(&run, plan.what_if);
  run.gates = EvaluateGates(plan.gates, run.summary, plan.baseline ? &*plan.baseline : nullptr);
  run.mark_critical_path = plan.critical_path;
  if (DrawsFlows(plan.outputs)) run.flows = PairFlowsNow(run.timeline);
  const bool written = EmitAll(plan.outputs, run, false);
  if (live_report) {
    live_report->clear();
    EmitterFor(OutputFormat::kHtml).emit(run, [live_report](std::string_view piece) { live_report->append(piece); });
  }
  *messages += capture.text();
  return written;
}


std::string LogsWithoutJobs(const FollowedSource& tree, std::set<std::string>* said) {
  std::vector<std::string> named;
  size_t count = 0;
  for (size_t i = 0; i < tree.size(); ++i) {
    const WorkerLogFile& file = tree.logs().files[i];
    if (tree.log(i).jobs_read() > 0 || !said->insert(file.path).second) continue;
    if (++count <= 5)
      named.push_back(tree.logs().machine_names[static_cast<size_t>(file.machine)] + " worker " +
                      std::to_string(file.worker) + " (" + file.path + ")");
  }
  if (count == 0) return "";
  std::string list;
  for (const std::string& name : named) list += (list.empty() ? "" : ", ") + name;
  if (count > named.size()) list += " and " + std::to_string(count - named.size()) + " more";
  return "jobviz follow: no job in the log of " + list + " yet (a rank that never started?); the steps are of the " +
         "logs with jobs, and " + (count == 1 ? "it joins" : "each joins") + " when its jobs come\n";
}

}  // namespace jobviz
