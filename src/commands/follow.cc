// jobviz follow: the logs of a running job, read as they grow
// (docs/follow.md). Each turn reads what every log appended (each line
// parsed once), builds the run as a batch run over the logs as they are now
// would (commands/stages.h), prints each step every worker has moved past,
// drops what --keep-steps no longer keeps, raises the stall alarm, and
// rewrites the outputs every --refresh seconds.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "analyse/step_queue.h"
#include "cli/exit_status.h"
#include "cli/report.h"
#include "cli/run_report.h"
#include "commands/commands.h"
#include "commands/follow_record.h"
#include "commands/follow_run.h"
#include "commands/printed_steps.h"
#include "emit/step_line.h"
#include "emit/stop_text.h"
#include "model/step_frontier.h"
#include "model/step_window.h"
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
      : plan_(plan),
        source_(MakeSource(plan.draw)),
        tree_(*source_),
        recorder_(plan.draw.record ? std::make_unique<FollowRecorder>(*plan.draw.record, plan.draw.verbosity) : nullptr),
        queue_(plan.draw.inputs.threads, [this](const StepReport& report) { PrintStep(report); }) {}
  int Run();

 private:
  void Turn(Clock::time_point now);
  void ReportSteps(const FinishedRun& run, size_t finished);
  void ReportEveryStep(const FinishedRun& run);
  void PrintStep(const StepReport& report);
  std::optional<int> CheckStall(Clock::time_point now);
  void NoteClockJumps(const std::vector<ClockJump>& found);
  void ForgetRestartedLogs();
  void PrintLastSteps();
  double QuietAfter() const;
  bool WriteOutputs(bool whole_run = false);
  void Say(const std::string& text);
  void Alarm(const char* type, const std::string& text);
  bool StartServer();
  void SayOnce(const std::string& text, std::string* last);
  void ShowStatus(Clock::time_point now);
  void SayWhatWasRead();
  double StallAfter() const;

  const FollowPlan& plan_;
  std::unique_ptr<FollowedSource> source_;
  FollowedSource& tree_;
  ChangeWaker waker_;
  LineParser parser_;
  // stdout, stderr and the status line: the step queue prints from its thread.
  std::mutex terminal_;
  PrintedSteps printed_;
  Clock::time_point last_job_at_ = Clock::now();
  bool stalled_ = false, finished_said_ = false;
  bool quiet_checked_ = false;  // the quiet since the last job was looked at (PrintLastSteps)
  bool steps_since_write_ = false;
  std::string last_build_text_, last_write_text_;
  bool status_shown_ = false;
  std::atomic<bool> stdout_gone_{false};  // set on the step queue's thread
  std::set<std::string> said_without_jobs_;  // LogsWithoutJobs
  std::string last_without_jobs_;
  bool catching_up_ = false;
  bool unbuilt_ = false;      // records arrived since the run was last built
  std::uint64_t generation_ = 0;  // the source's, when the cursors were last right
  // The machines' clock jumps found so far (align/clock_jumps.h), said once
  // each and undone in every later build: a turn may start after a jump.
  std::vector<ClockJump> clock_jumps_;
  std::vector<std::map<std::string, std::uint64_t>> jump_restarts_;  // each jump's logs' restarts() then
  std::unique_ptr<LiveServer> server_;  // --serve
  Clock::time_point status_at_ = Clock::now();
  std::uint64_t status_lines_ = 0;
  // JOBVIZ_FOLLOW_TURNS set: each turn's phases timed on stderr (tools/bench-follow).
  const bool time_turns_ = std::getenv("JOBVIZ_FOLLOW_TURNS") != nullptr;
  std::unique_ptr<FollowRecorder> recorder_;  // --record
  bool recorded_end_ = false;  // the run's end is in the ledger, no step printed since
  // Last: its thread prints through the members above, and is joined first.
  StepQueue queue_;
};

void Follower::Say(const std::string& text) {
  std::lock_guard lock(terminal_);
  if (status_shown_) std::fputs("\r\x1b[K", stderr);
  status_shown_ = false;
  PrintReport(text);
  std::fflush(stderr);
}

// The stall alarm, its end, and the run's end: on stderr and the live page.
void Follower::Alarm(const char* type, const std::string& text) {
  queue_.Drain();  // the steps before it come first
  Say("jobviz follow: " + text + (text.ends_with("\n") ? "" : "\n"));
  if (server_) server_->Publish(type, BidiInert(TerminalText(WithoutTerminalPrefixes(text))));
}

// Messages of the stages, which run every turn: said when they change.
void Follower::SayOnce(const std::string& text, std::string* last) {
  if (text != *last && !text.empty()) Say(text);
  *last = text;
}

double Follower::StallAfter() const {
  if (plan_.stall_after) return *plan_.stall_after;
  return std::max(kDefaultStallSeconds, 10 * printed_.MedianSeconds());
}

// Hands the steps of `run` finished and not yet printed to the queue, which
// prints them as soon as they are analysed.
void Follower::ReportSteps(const FinishedRun& run, size_t finished) {
  const size_t first = printed_.FirstNew(run.timeline.steps, finished);
  if (first >= finished) return;
  std::vector<Timeline> ones;
  for (StepSlice& slice : SliceSteps(run.timeline, first, finished)) {
    printed_.Add(slice.one.steps.front(), std::move(slice.first_lines));
    ones.push_back(std::move(slice.one));
  }
  queue_.Add(std::move(ones));
  steps_since_write_ = true;
}

// A run whose every worker finished its last step (the stop report's
// "finished"): all its steps not yet printed, the cursors after them.
void Follower::ReportEveryStep(const FinishedRun& run) {
  ReportSteps(run, run.timeline.steps.size());
  printed_.MoveCursors(tree_, plan_.keep_steps, plan_.draw.inputs.threads);
}

// On the queue's thread, in step order.
void Follower::PrintStep(const StepReport& report) {
  const std::string json = plan_.json || server_ ? StepJson(report).dump() : "";
  const std::string line = plan_.json ? json : StepLine(report);
  if (server_) server_->Publish("step", json);
  if (recorder_) recorder_->OnStep(report);
  std::lock_guard lock(terminal_);
  if (status_shown_) std::fputs("\r\x1b[K", stderr);
  status_shown_ = false;
  if (stdout_gone_) return;
  // Its reader went away (`| head -1`): follow ends as at SIGINT, outputs written.
  if (std::fprintf(stdout, "%s\n", line.c_str()) < 0 || std::fflush(stdout) != 0) {
    stdout_gone_ = true;
    ChangeWaker::AskStop();
  }
}

void Follower::Turn(Clock::time_point now) {
  // A log far behind is read a bounded slice a turn (TreeFollower::kTurnBytes),
  // each slice's steps reported and dropped before the next is read.
  const Clock::time_point start = Clock::now();
  const FollowedSource::Poll poll = tree_.PollAll(parser_);
  const Clock::time_point read = Clock::now();
  catching_up_ = poll.more;
  for (const std::string& dir : tree_.Directories()) waker_.Watch(dir);
  for (const std::string& note : poll.notes) Say("jobviz follow: " + note + "\n");
  if (poll.restarted > 0) ForgetRestartedLogs();
  if (poll.jobs > 0) {
    if (stalled_ || finished_said_)
      Alarm("resumed", "resumed after " + FormatDuration(static_cast<Nanos>(Seconds(now - last_job_at_) * 1e9)));
    recorded_end_ = false;
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
  if (!BuildFollowedRun(plan_.draw, tree_, FollowedBuild::kSteps, clock_jumps_, &run, &messages)) {
    SayOnce(messages, &last_build_text_);
    return;
  }
  last_build_text_.clear();
  NoteClockJumps(run.clocks.jumps);
  const Clock::time_point built = Clock::now();
  const size_t before = printed_.count();
  ReportSteps(run, tree_.Waited().empty() ? FinishedStepCount(run.timeline, tree_.gone()) : 0);
  const Clock::time_point sliced = Clock::now();
  const size_t count = printed_.count() - before;
  printed_.MoveCursors(tree_, plan_.keep_steps, plan_.draw.inputs.threads);
  if (time_turns_)
    std::fprintf(stderr, "jobviz follow: turn read %.4f s, build %.4f s (%zu jobs), steps %.4f s (%zu), cursors %.4f s\n",
                 Seconds(read - start), Seconds(built - read), run.jobs, Seconds(sliced - built), count,
                 Seconds(Clock::now() - sliced));
}

// Jumps a build found in what it read: said, and undone from now on.
void Follower::NoteClockJumps(const std::vector<ClockJump>& found) {
  if (found.empty()) return;
  const std::map<std::string, size_t> index = tree_.IndexByName();
  for (const ClockJump& jump : found) {
    Alarm("clock", ClockJumpText(jump));
    clock_jumps_.push_back(jump);
    auto& restarts = jump_restarts_.emplace_back();
    for (const auto& [file, line] : jump.from_lines)
      if (const auto it = index.find(file); it != index.end()) restarts[file] = tree_.log(it->second).restarts();
  }
}

// A log read again from its start (truncated or replaced) counts its lines
// from 1 again: the jumps found in it before no longer say where its clock changed.
void Follower::ForgetRestartedLogs() {
  if (clock_jumps_.empty()) return;
  const std::map<std::string, size_t> index = tree_.IndexByName();
  for (size_t j = 0; j < clock_jumps_.size(); ++j)
    std::erase_if(clock_jumps_[j].from_lines, [&](const std::pair<std::string, std::uint64_t>& entry) {
      const auto log = index.find(entry.first);
      const auto then = jump_restarts_[j].find(entry.first);
      return log != index.end() && then != jump_restarts_[j].end() && tree_.log(log->second).restarts() != then->second;
    });
}

// The logs went quiet for a moment: if every worker finished the last step
// as it finished its others (the stop report's "finished"), that step is
// printed now rather than at the stall alarm, a minute later: the end of a
// run, or a pause between steps (an evaluation, a checkpoint), shows at once.
void Follower::PrintLastSteps() {
  quiet_checked_ = true;
  FinishedRun run;
  std::string messages;
  if (tree_.Waited().empty() && BuildFollowedRun(plan_.draw, tree_, FollowedBuild::kStalled, clock_jumps_, &run, &messages) &&
      run.analysis.stop.kind == StopKind::kFinished)
    ReportEveryStep(run);
}

double Follower::QuietAfter() const {
  return std::max({kQuietSeconds, 2 * plan_.poll_seconds, 2 * printed_.MedianSeconds()});
}

// No job finished anywhere for --stall-after: the stop report, once per
// stall, of every record kept (not only those past the cursors), so that its
// times count from the run start the outputs and the page's report use. A run whose every worker finished its last step is not stalled:
// its last steps are reported and it is said to have finished.
std::optional<int> Follower::CheckStall(Clock::time_point now) {
  const double silent = Seconds(now - last_job_at_);
  if (!stalled_ && !finished_said_ && !quiet_checked_ && silent >= QuietAfter() && silent < StallAfter()) PrintLastSteps();
  if (stalled_ || finished_said_ || silent < StallAfter()) return std::nullopt;
  FinishedRun run;
  std::string messages;
  if (!BuildFollowedRun(plan_.draw, tree_, FollowedBuild::kWholeStalled, clock_jumps_, &run, &messages) || run.jobs == 0) {
    stalled_ = true;
    Alarm("stall", "stalled: no job line in " + FormatDuration(static_cast<Nanos>(silent * 1e9)) + "\n" + messages);
    return plan_.exit_on_stall ? std::optional<int>(kExitStalled) : std::nullopt;
  }
  if (recorder_) recorder_->OnRunEnd(run), recorded_end_ = true;  // finished or stalled: the run's summary
  const std::int64_t last_step = run.timeline.steps.empty() ? printed_.last() : run.timeline.steps.back().step;
  // The stall alarm knows what --hung says (BuildFollowedRun): the stop
  // report says whether the logs call the run's end after its last step.
  if (run.analysis.stop.kind == StopKind::kBetweenSteps) {
    ReportEveryStep(run);
    const std::int64_t last = StepNumber(printed_.last());
    stalled_ = true;
    Alarm("stall", "stalled between step " + std::to_string(last) + " and " + std::to_string(last + 1) +
                       ": every worker finished step " + std::to_string(last) + " and no job has finished for " +
                       FormatDuration(static_cast<Nanos>(silent * 1e9)) + " (--stall-after " +
                       FormatDuration(static_cast<Nanos>(StallAfter() * 1e9)) +
                       "); nothing in the logs says the run ended. A hang outside the pipeline's jobs: the data "
                       "loader, a checkpoint, an evaluation?\n");
    WriteOutputs(true);
    return plan_.exit_on_stall ? std::optional<int>(kExitStalled) : std::nullopt;
  }
  if (run.analysis.stop.kind == StopKind::kFinished) {
    ReportEveryStep(run);
    finished_said_ = true;
    Alarm("finished", "the run finished: every worker finished step " + std::to_string(StepNumber(printed_.last())) +
                          ", " + RunEndedBecause(run.timeline, last_step) + (plan_.exit_on_stall ? "" : "; still following"));
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

// The outputs named, atomically: the steps printed, the last --keep-steps
// of them (or, when the run stalled, the run as a batch run would see it).
bool Follower::WriteOutputs(bool whole_run) {
  if ((plan_.draw.outputs.empty() && !server_) || (!whole_run && !printed_.any())) return true;
  std::string messages, report;
  const bool written =
      WriteFollowedOutputs(plan_.draw, tree_, clock_jumps_, whole_run ? std::nullopt : std::optional<StepRange>(printed_.Shown(plan_.keep_steps)), &messages,
                           server_ ? &report : nullptr);
  if (server_ && !report.empty()) {
    server_->SetReport(std::move(report));
    server_->Publish("report", std::to_string(printed_.count()));
  }
  SayOnce(messages, &last_write_text_);
  steps_since_write_ = false;
  return written;
}

void Follower::ShowStatus(Clock::time_point now) {
  if (!plan_.status_line || Seconds(now - status_at_) < 1) return;
  std::lock_guard lock(terminal_);
  std::uint64_t lines = 0;
  const FollowedRecords* silent = nullptr;
  for (size_t i = 0; i < tree_.size(); ++i) {
    const FollowedRecords& log = tree_.log(i);
    lines += log.scan().lines;
    if (!silent || log.grew() < silent->grew()) silent = &log;
  }
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.0f lines/s", static_cast<double>(lines - std::min(lines, status_lines_)) / Seconds(now - status_at_));
  std::string text = "jobviz follow: " + std::to_string(printed_.count()) + " steps, " + rate;
  if (silent) text += ", silent longest: " + silent->scan().file + " " + FormatDuration(static_cast<Nanos>(Seconds(now - silent->grew()) * 1e9));
  if (const std::string waited = tree_.Waited(); !waited.empty()) text += ", steps wait for " + waited;
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
  if (!BuildFollowedRun(plan_.draw, tree_, FollowedBuild::kWhole, clock_jumps_, &run, &messages)) return;
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
  std::optional<int> stall_exit;  // --exit-on-stall: the outputs are written, the read report still said
  while (!ChangeWaker::StopAsked()) {
    const Clock::time_point turn_start = Clock::now();
    Turn(turn_start);
    if (printed_.any()) SayOnce(LogsWithoutJobs(tree_, &said_without_jobs_), &last_without_jobs_);
    if ((stall_exit = CheckStall(Clock::now()))) break;
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
  queue_.Drain();
  if (status_shown_) std::fputs("\r\x1b[K", stderr);
  status_shown_ = false;
  const bool written = stall_exit || WriteOutputs();
  if (recorder_ && !recorded_end_ && printed_.any()) {  // --record: the run as it stands when follow stops
    FinishedRun run;
    std::string messages;
    if (BuildFollowedRun(plan_.draw, tree_, FollowedBuild::kWhole, clock_jumps_, &run, &messages)) recorder_->OnRunEnd(run);
  }
  SayWhatWasRead();
  if (server_) server_->Stop();
  if (stall_exit) return *stall_exit;
  if (plan_.draw.verbosity >= kNormal)
    Say("jobviz follow: stopped" +
        (stdout_gone_ ? std::string(" (standard output closed: its reader went away)") : ChangeWaker::StopCause()) + " after " + std::to_string(printed_.count()) + (printed_.count() == 1 ? " step" : " steps") +
        (plan_.draw.outputs.empty() || !printed_.any() ? "" : written ? "; outputs written" : "; an output could not be written") + "\n");
  return !written ? kExitBadInput : recorder_ && recorder_->failed() ? kExitLedger : kExitOk;
}

}  // namespace

int RunFollow(const FollowPlan& plan) {
  Follower follower(plan);
  return follower.Run();
}

}  // namespace jobviz
