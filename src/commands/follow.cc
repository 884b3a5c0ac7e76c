// jobviz follow: the logs of a running job, read as they grow
// (docs/follow.md). Each turn reads what every log appended (each line
// parsed once), builds the run as a batch run over the logs as they are now
// would (commands/stages.h), prints each step every worker has moved past,
// drops what --keep-steps no longer keeps, raises the stall alarm, and
// rewrites the outputs every --refresh seconds.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <thread>

#include "analyse/step_report.h"
#include "cli/exit_status.h"
#include "cli/report.h"
#include "cli/run_report.h"
#include "commands/commands.h"
#include "commands/follow_run.h"
#include "emit/step_line.h"
#include "emit/stop_text.h"
#include "model/step_frontier.h"
#include "parse/event_streams.h"
#include "parse/tree_follower.h"
#include "read/change_waker.h"
#include "write/json_text.h"
#include "write/live_server.h"
#include "html_assets.h"

namespace jobviz {

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// The logs of a tree, or (merge --follow) the events streams of extract --follow.
std::unique_ptr<FollowedSource> MakeSource(const DrawPlan& plan) {
  if (plan.merge) return std::make_unique<EventStreams>(plan.inputs.files);
  return std::make_unique<TreeFollower>(plan.inputs.log_dir, plan.inputs.multi_machine, plan.inputs.devices,
                                        plan.inputs.files, plan.inputs.threads);
}

class Follower {
 public:
  explicit Follower(const FollowPlan& plan)
      : plan_(plan), source_(MakeSource(plan.draw)), tree_(*source_) {}
  int Run();

 private:
  void Turn(Clock::time_point now);
  std::vector<std::int64_t> ReportSteps(const FinishedRun& run, size_t finished);
  // Logs by name: their indices move when a log appears (machines and
  // workers are put in order again).
  using FirstLineOf = std::vector<std::pair<std::string, std::uint64_t>>;
  std::map<std::int64_t, FirstLineOf> FirstLines(const FinishedRun& run) const;
  void EachLog(const FirstLineOf& lines, const std::function<void(FollowedRecords&, std::uint64_t)>& act);
  void MoveCursors(const FinishedRun& run, const std::vector<std::int64_t>& reported);
  std::optional<int> CheckStall(Clock::time_point now);
  void PrintLastSteps();
  double QuietAfter() const;
  bool WriteOutputs(bool whole_run = false);
  StepRange ShownSteps() const;
  void Say(const std::string& text);
  void Alarm(const char* type, const std::string& text);
  bool StartServer();
  void SayOnce(const std::string& text, std::string* last);
  void ShowStatus(Clock::time_point now);
  void SayWhatWasRead();
  double StallAfter() const;
  double MedianStepSeconds() const;

  const FollowPlan& plan_;
  std::unique_ptr<FollowedSource> source_;
  FollowedSource& tree_;
  ChangeWaker waker_;
  LineParser parser_;
  // The last step reported: a later step is new, and so is one that begins
  // after it ends (a restarted run counts its steps again).
  bool reported_any_ = false;
  std::int64_t last_step_ = kNoStep;
  Nanos last_end_ = 0;
  size_t steps_reported_ = 0;
  // The last steps reported: their durations (the stall alarm's default is
  // 10 times their median), and where each begins in each log.
  static constexpr size_t kMedianOf = 1000;
  std::deque<Nanos> durations_;
  std::deque<std::pair<std::int64_t, FirstLineOf>> kept_;
  Clock::time_point last_job_at_ = Clock::now();
  bool stalled_ = false, finished_said_ = false;
  bool quiet_checked_ = false;  // the quiet since the last job was looked at (PrintLastSteps)
  bool steps_since_write_ = false;
  std::string last_build_text_, last_write_text_;
  bool status_shown_ = false;
  bool catching_up_ = false;
  bool unbuilt_ = false;      // records arrived since the run was last built
  std::uint64_t generation_ = 0;  // the source's, when the cursors were last right
  std::unique_ptr<LiveServer> server_;  // --serve  // the last turn left bytes unread: the next one comes at once
  Clock::time_point status_at_ = Clock::now();
  std::uint64_t status_lines_ = 0;
};

void Follower::Say(const std::string& text) {
  if (status_shown_) std::fputs("\r\x1b[K", stderr);
  status_shown_ = false;
  PrintReport(text);
  std::fflush(stderr);
}

// The stall alarm, its end, and the run's end: on stderr and the live page.
void Follower::Alarm(const char* type, const std::string& text) {
  Say("jobviz follow: " + text + (text.ends_with("\n") ? "" : "\n"));
  if (server_) server_->Publish(type, TerminalText(text));
}

// Messages of the stages, which run every turn: said when they change.
void Follower::SayOnce(const std::string& text, std::string* last) {
  if (text != *last && !text.empty()) Say(text);
  *last = text;
}

// The median of the last steps printed, in seconds (0 before the first).
double Follower::MedianStepSeconds() const {
  std::vector<Nanos> d(durations_.begin(), durations_.end());
  if (d.empty()) return 0;
  std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2), d.end());
  return static_cast<double>(d[d.size() / 2]) / 1e9;
}

double Follower::StallAfter() const {
  if (plan_.stall_after) return *plan_.stall_after;
  return std::max(kDefaultStallSeconds, 10 * MedianStepSeconds());
}

// Prints the steps of `run` finished and not yet printed; returns them.
std::vector<std::int64_t> Follower::ReportSteps(const FinishedRun& run, size_t finished) {
  const std::vector<StepSpan>& steps = run.timeline.steps;
  size_t first = 0;
  while (first < finished && reported_any_ && steps[first].step <= last_step_ && steps[first].start < last_end_) ++first;
  std::vector<std::int64_t> reported;
  if (first >= finished) return reported;
  for (const StepReport& report : AnalyseSteps(run.timeline, first, finished, plan_.draw.inputs.threads)) {
    const std::string json = plan_.json || server_ ? StepJson(report).dump() : "";
    const std::string line = plan_.json ? json : StepLine(report);
    if (server_) server_->Publish("step", json);
    if (status_shown_) std::fputs("\r\x1b[K", stderr);
    status_shown_ = false;
    std::fprintf(stdout, "%s\n", line.c_str());
    reported_any_ = true;
    last_step_ = report.span.step;
    last_end_ = report.span.end;
    durations_.push_back(report.span.end - report.span.start);
    if (durations_.size() > kMedianOf) durations_.pop_front();
    reported.push_back(report.span.step);
    ++steps_reported_;
  }
  std::fflush(stdout);
  steps_since_write_ = true;
  return reported;
}

// Each step's first job line in each log (a worker's jobs of a step come
// after its jobs of earlier steps), in one pass over the run's jobs.
std::map<std::int64_t, Follower::FirstLineOf> Follower::FirstLines(const FinishedRun& run) const {
  std::map<std::int64_t, FirstLineOf> lines;
  for (const Worker* worker : AllWorkers(run.timeline)) {
    std::map<std::int64_t, std::uint64_t> first;
    for (const Job& job : worker->jobs) {
      auto [it, inserted] = first.emplace(job.step, job.line);
      if (!inserted) it->second = std::min(it->second, job.line);
    }
    for (const auto& [step, line] : first) lines[step].emplace_back(worker->file, line);
  }
  return lines;
}

void Follower::EachLog(const FirstLineOf& lines, const std::function<void(FollowedRecords&, std::uint64_t)>& act) {
  const std::map<std::string, size_t> index = tree_.IndexByName();
  for (const auto& [name, line] : lines)
    if (const auto it = index.find(name); it != index.end()) act(tree_.log(it->second), line);
}

// After a report: each turn builds from the last step reported on (kept as
// the measure of what a finished step holds), and --keep-steps drops the
// records of steps before the last N reported.
void Follower::MoveCursors(const FinishedRun& run, const std::vector<std::int64_t>& reported) {
  if (reported.empty()) return;
  auto firsts = FirstLines(run);
  for (const std::int64_t step : reported) kept_.push_back({step, std::move(firsts[step])});
  const std::int64_t cursor_step = StepNumber(kept_.back().first);
  EachLog(kept_.back().second, [&](FollowedRecords& log, std::uint64_t line) { log.SetCursor(line, cursor_step); });
  // Records are dropped once twice --keep-steps are held, down to it: each
  // record is copied by a drop about once, however often steps finish.
  const size_t keep = std::max<size_t>(1, plan_.keep_steps);
  if (plan_.keep_steps == 0) {
    while (kept_.size() > 1) kept_.pop_front();
    return;
  }
  if (kept_.size() <= 2 * keep) return;
  while (kept_.size() > keep) kept_.pop_front();
  const std::int64_t first_kept = StepNumber(kept_.front().first);
  EachLog(kept_.front().second, [&](FollowedRecords& log, std::uint64_t line) { log.DropBefore(line, first_kept); });
}

void Follower::Turn(Clock::time_point now) {
  // A log far behind is read a bounded slice a turn (TreeFollower::kTurnBytes),
  // each slice's steps reported and dropped before the next is read.
  const FollowedSource::Poll poll = tree_.PollAll(parser_);
  catching_up_ = poll.more;
  for (const std::string& dir : tree_.Directories()) waker_.Watch(dir);
  for (const std::string& note : poll.notes) Say("jobviz follow: " + note + "\n");
  if (poll.jobs > 0) {
    if (stalled_) Alarm("resumed", "resumed after " + FormatDuration(static_cast<Nanos>(Seconds(now - last_job_at_) * 1e9)));
    stalled_ = false;
    finished_said_ = false;
    quiet_checked_ = false;
    last_job_at_ = now;
  }
  // Catching up on logs far behind, the run is built once they are read
  // (each build reads every record kept: per slice, reading them all would
  // cost the square of their number); with --keep-steps, after each slice,
  // so that what is dropped never piles up.
  // A log that joins after steps were printed: the next build reads every
  // record kept, so that all logs count their steps alike, and the cursors
  // are set again from it.
  if (tree_.generation() != generation_) {
    generation_ = tree_.generation();
    for (size_t i = 0; i < tree_.size(); ++i) tree_.log(i).SetCursor(0, 0);
    unbuilt_ = true;
  }
  unbuilt_ |= poll.records > 0;
  if (!unbuilt_ || (poll.more && plan_.keep_steps == 0)) return;
  unbuilt_ = false;
  FinishedRun run;
  std::string messages;
  if (!BuildFollowedRun(plan_.draw, tree_, FollowedBuild::kSteps, &run, &messages)) {
    SayOnce(messages, &last_build_text_);
    return;
  }
  last_build_text_.clear();
  MoveCursors(run, ReportSteps(run, FinishedStepCount(run.timeline, tree_.gone())));
}

// The logs went quiet for a moment: if every worker finished the last step
// as it finished its others (the stop report's "finished"), that step is
// printed now rather than at the stall alarm, a minute later: the end of a
// run, or a pause between steps (an evaluation, a checkpoint), shows at once.
void Follower::PrintLastSteps() {
  quiet_checked_ = true;
  FinishedRun run;
  std::string messages;
  if (BuildFollowedRun(plan_.draw, tree_, FollowedBuild::kStalled, &run, &messages) &&
      run.analysis.stop.kind == StopKind::kFinished)
    MoveCursors(run, ReportSteps(run, run.timeline.steps.size()));
}

double Follower::QuietAfter() const {
  return std::max({kQuietSeconds, 2 * plan_.poll_seconds, 2 * MedianStepSeconds()});
}

// No job finished anywhere for --stall-after: the stop report, once per
// stall. A run whose every worker finished its last step is not stalled:
// its last steps are reported and it is said to have finished.
std::optional<int> Follower::CheckStall(Clock::time_point now) {
  const double silent = Seconds(now - last_job_at_);
  if (!stalled_ && !finished_said_ && !quiet_checked_ && silent >= QuietAfter() && silent < StallAfter()) PrintLastSteps();
  if (stalled_ || finished_said_ || silent < StallAfter()) return std::nullopt;
  FinishedRun run;
  std::string messages;
  if (!BuildFollowedRun(plan_.draw, tree_, FollowedBuild::kStalled, &run, &messages) || run.jobs == 0) {
    stalled_ = true;
    Alarm("stall", "stalled: no job line in " + FormatDuration(static_cast<Nanos>(silent * 1e9)) + "\n" + messages);
    return plan_.exit_on_stall ? std::optional<int>(kExitStalled) : std::nullopt;
  }
  if (run.analysis.stop.kind == StopKind::kFinished) {
    MoveCursors(run, ReportSteps(run, run.timeline.steps.size()));
    finished_said_ = true;
    Alarm("finished", "the run finished: every worker finished step " + std::to_string(StepNumber(last_step_)) +
                          (plan_.exit_on_stall ? "" : "; still following"));
    const bool written = WriteOutputs(true);
    if (plan_.exit_on_stall) return written ? kExitOk : kExitBadInput;
    return std::nullopt;
  }
  stalled_ = true;
  Alarm("stall", "stalled: no job has finished for " + FormatDuration(static_cast<Nanos>(silent * 1e9)) +
                     " (--stall-after " + FormatDuration(static_cast<Nanos>(StallAfter() * 1e9)) + ")\n" +
                     StopReportLines(run.analysis.stop, run.timeline));
  // The outputs and the page show where it stopped, as a batch run would.
  WriteOutputs(true);
  return plan_.exit_on_stall ? std::optional<int>(kExitStalled) : std::nullopt;
}

// The outputs named, atomically: the steps reported (or, when the run
// stalled, the run as a batch run would see it).
// The steps the outputs hold: those printed, the last --keep-steps of them.
StepRange Follower::ShownSteps() const {
  StepRange range{kNoStep, last_step_};
  if (plan_.keep_steps > 0 && !kept_.empty())
    range.first = kept_[kept_.size() > plan_.keep_steps ? kept_.size() - plan_.keep_steps : 0].first;
  return range;
}

bool Follower::WriteOutputs(bool whole_run) {
  if ((plan_.draw.outputs.empty() && !server_) || (!whole_run && !reported_any_)) return true;
  std::string messages, report;
  const bool written =
      WriteFollowedOutputs(plan_.draw, tree_, whole_run ? std::nullopt : std::optional<StepRange>(ShownSteps()), &messages,
                           server_ ? &report : nullptr);
  if (server_ && !report.empty()) {
    server_->SetReport(std::move(report));
    server_->Publish("report", std::to_string(steps_reported_));
  }
  SayOnce(messages, &last_write_text_);
  steps_since_write_ = false;
  return written;
}

void Follower::ShowStatus(Clock::time_point now) {
  if (!plan_.status_line || Seconds(now - status_at_) < 1) return;
  std::uint64_t lines = 0;
  const FollowedRecords* silent = nullptr;
  for (size_t i = 0; i < tree_.size(); ++i) {
    const FollowedRecords& log = tree_.log(i);
    lines += log.scan().lines;
    if (!silent || log.grew() < silent->grew()) silent = &log;
  }
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.0f lines/s", static_cast<double>(lines - std::min(lines, status_lines_)) / Seconds(now - status_at_));
  std::string text = "jobviz follow: " + std::to_string(steps_reported_) + " steps, " + rate;
  if (silent) text += ", silent longest: " + silent->scan().file + " " + FormatDuration(static_cast<Nanos>(Seconds(now - silent->grew()) * 1e9));
  std::fprintf(stderr, "\r\x1b[K%s", TerminalText(text).c_str());
  std::fflush(stderr);
  status_shown_ = true;
  status_at_ = now;
  status_lines_ = lines;
}

// At the end, what a batch run says of the logs as they are: files, lines,
// jobs used, lines skipped and why (with file:line). Not where the run
// stopped: it was still running, unless the alarm said so.
void Follower::SayWhatWasRead() {
  if (plan_.draw.verbosity < kNormal) return;
  FinishedRun run;
  std::string messages;
  if (!BuildFollowedRun(plan_.draw, tree_, FollowedBuild::kWhole, &run, &messages)) return;
  if (!stalled_) run.analysis.stop = StopReport{};
  Say(RunReport(run, plan_.draw.verbosity));
}

// --serve: the address is taken now, before any log is read (a port in use
// is a usage error, exit 2).
bool Follower::StartServer() {
  if (plan_.serve.empty()) return true;
  server_ = std::make_unique<LiveServer>();
  std::string error;
  if (!server_->Start(plan_.serve, &error)) {
    PrintError("--serve " + error, "name another port (--serve 0 takes any free one), or stop what holds it");
    return false;
  }
  server_->SetPage(std::string(kAsset_live_html));
  server_->Publish("source", plan_.draw.inputs.log_dir.empty() ? std::to_string(plan_.draw.inputs.files.size()) + " logs"
                                                               : plan_.draw.inputs.log_dir);
  Say("jobviz follow: the live page is at http://" + server_->address() + "/\n");
  return true;
}

int Follower::Run() {
  if (!StartServer()) return kExitUsage;
  ChangeWaker::HandleStopSignals();
  const auto refresh = std::chrono::duration<double>(plan_.refresh_seconds);
  Clock::time_point next_write = Clock::now() + std::chrono::duration_cast<Clock::duration>(refresh);
  while (!ChangeWaker::StopAsked()) {
    const Clock::time_point turn_start = Clock::now();
    Turn(turn_start);
    if (auto status = CheckStall(Clock::now())) return *status;
    if (Clock::now() >= next_write) {
      if (steps_since_write_) WriteOutputs();
      next_write = Clock::now() + std::chrono::duration_cast<Clock::duration>(refresh);
    }
    ShowStatus(Clock::now());
    // Turns are at least twice their own cost apart (and 0.2 s): following
    // keeps at most about half a core busy however fast the logs grow.
    const double cost = Seconds(Clock::now() - turn_start);
    const Clock::time_point earliest = turn_start + std::chrono::duration_cast<Clock::duration>(
                                                        std::chrono::duration<double>(std::max(kMinTurnSeconds, 2 * cost)));
    const double until_write = Seconds(next_write - Clock::now());
    const double silent = Seconds(Clock::now() - last_job_at_);
    const double until_stall = (quiet_checked_ ? StallAfter() : std::min(StallAfter(), QuietAfter())) - silent;
    const bool alarm_pending = !stalled_ && !finished_said_;
    if (catching_up_) continue;
    waker_.Wait(std::min({plan_.poll_seconds, std::max(0.0, until_write),
                          alarm_pending ? std::max(0.0, until_stall) : plan_.poll_seconds}));
    if (!ChangeWaker::StopAsked()) std::this_thread::sleep_until(earliest);
  }
  if (status_shown_) std::fputs("\r\x1b[K", stderr);
  status_shown_ = false;
  const bool written = WriteOutputs();
  SayWhatWasRead();
  if (server_) server_->Stop();
  if (plan_.draw.verbosity >= kNormal)
    Say("jobviz follow: stopped after " + std::to_string(steps_reported_) + (steps_reported_ == 1 ? " step" : " steps") +
        (plan_.draw.outputs.empty() || !reported_any_ ? "" : written ? "; outputs written" : "; an output could not be written") + "\n");
  return written ? kExitOk : kExitBadInput;
}

}  // namespace

int RunFollow(const FollowPlan& plan) {
  Follower follower(plan);
  return follower.Run();
}

}  // namespace jobviz
