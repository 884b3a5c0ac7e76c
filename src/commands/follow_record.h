// jobviz follow --record: the followed run in the ledger as it goes (docs/
// history.md). Its first printed step makes a live run (stop "running",
// identified by its name and first step); each printed step adds its row;
// when the run finishes, stalls, or follow stops, the run's summary replaces
// the live rows in one transaction (identified then by its logs' content, as
// a batch run's, its printed steps kept). A later step adds to it again.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "analyse/step_report.h"
#include "cli/plan.h"
#include "history/ledger_store.h"

namespace jobviz {

class FollowRecorder {
 public:
  FollowRecorder(const RecordPlan& plan, int verbosity) : plan_(plan), verbosity_(verbosity) {}
  void OnStep(const StepReport& report);  // on the step queue's thread
  void OnRunEnd(FinishedRun& run);  // the whole run as follow built it (analysed here when it is not)
  bool failed() const;                    // a write failed (said once): exit 5 at the end

 private:
  bool Open();
  void Fail(const LedgerError& error);
  const RecordPlan& plan_;
  const int verbosity_;
  mutable std::mutex mutex_;  // the queue's thread and the main one
  std::optional<LedgerDb> db_;
  std::string identity_;  // the run's in the ledger now: live, or as it last ended
  std::map<std::int64_t, std::pair<double, double>> steps_;  // printed: step -> (duration, bubble)
  RunningMedian step_median_;  // of steps_' durations: not sorted again at each step of a long run
  double bubble_sum_ = 0;                                    // of steps_' bubbles
  std::optional<std::int64_t> ended_at_;  // the last step of the run's end as recorded, until a later step
  bool failed_ = false;
};

}  // namespace jobviz
