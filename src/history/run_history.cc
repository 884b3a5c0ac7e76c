#include "history/run_history.h"

#include <algorithm>

namespace jobviz {

std::vector<HistoryLine> CompareRuns(const std::vector<LedgerRun>& runs, const HistoryOptions& options) {
  std::vector<HistoryLine> lines;
  const size_t first = runs.size() > options.last ? runs.size() - options.last : 0;
  for (size_t i = first; i < runs.size(); ++i) {
    HistoryLine line;
    line.run = &runs[i];
    line.stopped = !runs[i].record.finished();
    std::vector<double> steps, bubbles;  // of the finished runs before it, the latest K
    for (size_t j = i; j-- > 0 && steps.size() < options.compare;) {
      if (runs[j].record.name != runs[i].record.name || !runs[j].record.comparable()) continue;
      steps.push_back(runs[j].record.step_us);
      bubbles.push_back(runs[j].record.bubble);
    }
    line.before = steps.size();
    if (!steps.empty()) {
      line.median_step_us = Median(steps);
      line.median_bubble = Median(bubbles);
      const RunRecord& r = runs[i].record;
      if (*line.median_step_us > 0 && r.steps > 0) {
        line.step_change = (r.step_us - *line.median_step_us) / *line.median_step_us;
        line.step_regressed = !line.stopped && *line.step_change > options.step_regression;
      }
      if (r.steps > 0) {
        line.bubble_change = r.bubble - *line.median_bubble;
        line.bubble_regressed = !line.stopped && *line.bubble_change > options.bubble_regression;
      }
    }
    lines.push_back(line);
  }
  return lines;
}

}  // namespace jobviz
