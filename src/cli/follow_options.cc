// `jobviz follow`: the flags of `jobviz` (cli/draw_flags.h) and its own.
#include <unistd.h>

#include "cli/draw_flags.h"
#include "cli/exit_status.h"
#include "cli/option_values.h"
#include "cli/output_paths.h"
#include "cli/seconds_option.h"
#include "cli/options.h"
#include "write/http_text.h"

namespace jobviz {

namespace {

struct FollowFlags {
  std::string serve;
  double poll = 1, refresh = 10, stall_after = 0;
  bool json = false, exit_on_stall = false;
  size_t keep_steps = 0;
};

void AddFollowOptions(CLI::App& app, FollowFlags& f) {
  app.add_option("--poll", f.poll,
                 "Look at every log this often, in seconds (default 1): what inotify cannot see (NFS, Lustre, "
                 "other nodes' writes) shows within it; local writes wake jobviz at once")
      ->type_name("SECONDS")->check(SecondsBetween(0.05, 3600.0));
  app.add_option("--refresh", f.refresh, "Rewrite the outputs named (-o, --html, --summary-json, ...) this often (default 10)")
      ->type_name("SECONDS")->check(SecondsBetween(0.1, 86400.0));
  app.add_option("--serve", f.serve,
                 "Serve a live page (the HTML report, updated in place as steps finish, and a chart of step time and "
                 "bubble) on [ADDR:]PORT; 127.0.0.1 unless ADDR is named, 0 for any free port")
      ->type_name("[ADDR:]PORT")
      ->check([](const std::string& value) {
        std::string host;
        int port = 0;
        return ParseServeAddress(value, &host, &port) ? std::string() : "expected PORT, ADDR:PORT or [ADDR6]:PORT";
      });
  app.add_flag("--json", f.json, "One JSON object per finished step on stdout, instead of a line of text");
  app.add_option("--stall-after", f.stall_after,
                 "Call the run stalled when no job has finished anywhere for this long (default: the larger of 60 s "
                 "and 10 median step times); the stop report goes to stderr, once per stall")
      ->type_name("SECONDS")->check(SecondsBetween(0.1, 604800.0));
  app.add_flag("--exit-on-stall", f.exit_on_stall, "Exit with status 4 at the first stall, after writing the outputs");
  app.add_option("--keep-steps", f.keep_steps,
                 "Keep only the last N finished steps in memory and in the outputs (default: all); memory stays flat "
                 "on runs of days")
      ->type_name("N")->check(CLI::Range(size_t{1}, size_t{100'000'000}));
}

}  // namespace

Parsed<FollowPlan> ParseFollowCommandLine(int argc, char** argv, bool merge) {
  CLI::App app{
      "jobviz follow: read the worker logs of a running job as they grow; print each step as soon as every\n"
      "worker has moved past it (time, bubble, top cause, slow workers), raise a stall alarm with the stop\n"
      "report, and keep the outputs named current (only those named: no default trace). Ctrl-C stops it,\n"
      "every output complete. docs/follow.md"};
  app.name(merge ? "jobviz merge --follow" : "jobviz follow");
  bool follow_flag = false;
  if (merge) app.add_flag("--follow", follow_flag, "Read the open streams of `jobviz extract --follow` as they grow")->required();
  app.get_formatter()->column_width(30);
  DrawFlags flags;
  FollowFlags follow;
  AddInputOptions(app, flags);
  AddFollowOptions(app, follow);
  AddOutputOptions(app, flags);
  AddClockOptions(app, flags);
  AddRecordOptions(app, flags, /*baseline=*/false);
  if (auto stop = ParseOrExit<FollowPlan>(app, argc, argv, "jobviz follow")) return std::move(*stop);
  const char* command = merge ? "jobviz merge --follow" : "jobviz follow";
  if (merge && (!flags.inputs.log_dir.empty() || flags.inputs.multi_machine || !flags.inputs.devices.empty() ||
                flags.inputs.files.empty()))
    return {std::nullopt, UsageError(command, "give the streams of `jobviz extract --follow` (and no --log_dir, "
                                              "--multi_machine or --devices)",
                                     "e.g. jobviz merge --follow events/machine*.jsonl (docs/extract-merge.md)")};
  for (const std::string& file : flags.inputs.files)
    if (file == "-" && !merge)
      return {std::nullopt, UsageError("jobviz follow", "standard input cannot be followed as a log",
                                       "give the log files or --log_dir; `jobviz -` reads a finished log from stdin")};
  if (flags.summary_on)
    return {std::nullopt, UsageError(command, "--summary: stdout holds the steps", "--summary-md FILE keeps the tables current")};
  Parsed<DrawPlan> draw = ToPlan(flags, DrawCommand::kFollow);
  if (!draw.plan) return {std::nullopt, draw.exit_code};
  draw.plan->merge = merge;
  for (const OutputRequest& output : draw.plan->outputs)
    if (!output.to_stderr && IsStandardOutput(output.path))
      return {std::nullopt, UsageError(command, output.flag + " " + output.path + ": stdout holds the steps; write the outputs to files",
                                       "e.g. --summary-json summary.json")};
  // Before anything is read or written: follow runs beside the job, on its own logs.
  if (const std::string clash = FollowedOutputClash(draw.plan->outputs, flags.inputs.log_dir, flags.inputs.files);
      !clash.empty())
    return {std::nullopt, UsageError(command, clash, "write the outputs outside the followed logs, e.g. --html report.html")};
  if (draw.plan->steps)
    return {std::nullopt, UsageError(command, "--steps: follow reports every step as it finishes",
                                     "--keep-steps N keeps the last N in memory and the outputs")};
  FollowPlan plan;
  plan.draw = std::move(*draw.plan);
  plan.poll_seconds = follow.poll;
  plan.refresh_seconds = follow.refresh;
  plan.json = follow.json;
  if (follow.stall_after > 0) plan.stall_after = follow.stall_after;
  plan.exit_on_stall = follow.exit_on_stall;
  plan.keep_steps = follow.keep_steps;
  plan.serve = follow.serve;
  if (!plan.serve.empty()) {  // the live page is an HTML report: it draws what one would
    std::vector<OutputRequest> shown = plan.draw.outputs;
    shown.push_back({OutputFormat::kHtml, "", false, "--serve"});
    plan.draw.what_if = PlanWhatIf(flags.what_if, shown, !plan.draw.gates.empty());
  }
  plan.status_line = plan.draw.verbosity >= kNormal && isatty(STDERR_FILENO);
  return {std::move(plan), kExitOk};
}

}  // namespace jobviz
