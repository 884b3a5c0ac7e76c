#include "model/run_splitter.h"

#include <optional>

namespace jobviz {

std::vector<RunRange> SplitRuns(const std::vector<LogRecord>& records) {
  std::vector<RunRange> runs;
  bool has_activity = false;  // the current run holds a job, step or sync line
  std::optional<std::int64_t> highest_step, highest_round;

  auto start_run = [&](size_t index, std::string why) {
    if (!runs.empty()) runs.back().end = index;
    runs.push_back({index, records.size(), records[index].line, std::move(why)});
    has_activity = false;
    highest_step.reset();
    highest_round.reset();
  };

  for (size_t i = 0; i < records.size(); ++i) {
    const LogRecord& r = records[i];
    if (runs.empty()) start_run(i, "");
    switch (r.kind) {
      case RecordKind::kProfilerWindow:
        if (has_activity) start_run(i, "profiler start line after jobs");
        break;
      case RecordKind::kStepPush:
        if (highest_step && r.step <= *highest_step)
          start_run(i, "step " + std::to_string(r.step) + " pushed again");
        highest_step = r.step;
        has_activity = true;
        break;
      case RecordKind::kClockSync:
        // Not activity for the rule above: sync rounds may come right
        // before the window line of the same run.
        if (highest_round && r.round <= *highest_round)
          start_run(i, "clock sync round " + std::to_string(r.round) + " taken again");
        highest_round = r.round;
        break;
      case RecordKind::kJob:
      case RecordKind::kStepPop:
      case RecordKind::kRangePush:
        has_activity = true;
        break;
    }
  }
  return runs;
}

}  // namespace jobviz
