#include "commands/follow_record.h"

#include <cstdio>
#include <ctime>
#include <map>

#include "cli/exit_status.h"
#include "cli/report.h"
#include "commands/stages.h"

namespace jobviz {

namespace {

std::int64_t Now() { return static_cast<std::int64_t>(std::time(nullptr)); }

}  // namespace

bool FollowRecorder::Open() {
  if (db_ || failed_) return !failed_;
  LedgerError error;
  std::optional<LedgerDb> opened = LedgerDb::Open(plan_.ledger, /*for_writing=*/true, &error);
  if (opened)
    db_.emplace(std::move(*opened));
  else
    Fail(error);
  return !failed_;
}

void FollowRecorder::Fail(const LedgerError& error) {
  if (!failed_) PrintError("--record: " + error.message, error.hint);
  failed_ = true;
}

bool FollowRecorder::failed() const {
  std::lock_guard lock(mutex_);
  return failed_;
}

void FollowRecorder::OnStep(const StepReport& report) {
  std::lock_guard lock(mutex_);
  if (!Open()) return;
  LedgerError error;
  if (identity_.empty()) {  // the first printed step: the live run
    RunRecord live;
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx",
                  static_cast<unsigned long long>(std::hash<std::string>{}(plan_.name + "\n" + std::to_string(report.span.start))));
    live.identity = std::string("live-") + hash;
    live.name = plan_.name;
    live.tags = plan_.tags;
    live.command = "jobviz follow";
    live.recorded_at = Now();
    live.started_at = report.span.start / 1'000'000'000;
    live.stop_kind = "running";
    live.stop_sentence = "jobviz follow is following it";
    if (!StoreRun(*db_, live, &error)) return Fail(error);
    identity_ = live.identity;
  }
  const std::int64_t number = StepNumber(report.span.step);  // as the summary numbers it
  const double duration_us = static_cast<double>(report.span.end - report.span.start) / 1000;
  if (steps_.try_emplace(number, duration_us, report.bubble_ratio).second) {
    step_median_.Add(duration_us);
    bubble_sum_ += report.bubble_ratio;
  }
  // A step the run's end already holds (printed after the end was recorded) changes nothing; a later one
  // means the run goes on: running again.
  if (ended_at_ && number <= *ended_at_) return;
  ended_at_.reset();
  if (!AddStepRow(*db_, identity_, number, duration_us, report.bubble_ratio, steps_.size(), step_median_.median(),
                  bubble_sum_ / static_cast<double>(steps_.size()), &error))
    Fail(error);
}

void FollowRecorder::OnRunEnd(FinishedRun& run) {
  std::lock_guard lock(mutex_);
  if (!Open()) return;
  if (run.summary.is_null()) AnalyseRun(&run);  // follow's builds stop at the steps; the stop report is kept
  RunRecord record = RecordOf(run, plan_.name, plan_.tags, "jobviz follow", Now());
  // The steps printed (--keep-steps may have dropped early ones from the run) and the summary's.
  std::map<std::int64_t, std::pair<double, double>> steps = steps_;
  for (const auto& [step, values] : record.step_rows) steps[step] = values;
  record.step_rows.assign(steps.begin(), steps.end());
  record.steps = record.step_rows.size();
  LedgerError error;
  const auto stored = StoreRun(*db_, record, &error, identity_);
  if (!stored) return Fail(error);
  identity_ = record.identity;
  ended_at_ = record.step_rows.empty() ? std::int64_t{-1} : record.step_rows.back().first;
  if (verbosity_ >= kNormal)
    PrintReport("jobviz follow: record: run #" + std::to_string(stored->id) + " '" + record.name + "' in " + plan_.ledger +
                " (" + record.stop_kind + ", " + std::to_string(record.steps) + " steps)\n");
}

}  // namespace jobviz
