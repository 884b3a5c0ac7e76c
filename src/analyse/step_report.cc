#include "analyse/step_report.h"

#include <algorithm>

#include "analyse/analysis.h"
#include "model/step_window.h"
#include "read/parallel_for.h"

namespace jobviz {

namespace {

StepReport ReportOf(const Timeline& one, int threads) {
  StepReport report;
  report.span = one.steps.front();
  report.jobs = CountJobs(one);
  const Analysis analysis = Analyze(one, threads);
  report.bubble_ratio = analysis.bubble_ratio;
  report.ideal_bubble = analysis.schedule.ideal_bubble;
  const Bottleneck& b = analysis.bottleneck;
  if (!b.causes.empty()) {
    report.top_cause = b.causes.front();
    report.cause_label = CauseLabel(report.top_cause->kind, b.slowest_stage);
  }
  for (const SlowWorker& slow : analysis.slow_workers) report.slow_workers.push_back({slow.name, slow.factor});
  std::stable_sort(report.slow_workers.begin(), report.slow_workers.end(),
                   [](const StepSlowWorker& a, const StepSlowWorker& b) { return a.factor > b.factor; });
  return report;
}

}  // namespace

std::string CauseLabel(WhatIfKind kind, int slowest_stage) {
  switch (kind) {
    case WhatIfKind::kBalancedStages: return slowest_stage >= 0 ? "stage " + std::to_string(slowest_stage) : "stages";
    case WhatIfKind::kFreeHandOffs: return "hand-offs";
    case WhatIfKind::kNoOutliers: return "outlier jobs";
    case WhatIfKind::kNoStall: return "stalls";
    case WhatIfKind::kNoSlowWorkers: return "slow workers";
    case WhatIfKind::kNoStepGaps: return "step gaps";
    case WhatIfKind::kAll:
    case WhatIfKind::kCount: break;
  }
  return "all";
}

std::vector<StepReport> AnalyseOneSteps(const std::vector<Timeline>& ones, int threads) {
  // Steps are small: one thread each, several steps at once (a thread pool
  // per step would cost more than the step's analysis).
  std::vector<StepReport> reports(ones.size());
  ParallelFor(ones.size(), ones.size() > 1 ? threads : 1, [&](size_t i) { reports[i] = ReportOf(ones[i], 1); });
  return reports;
}

std::vector<StepReport> AnalyseSteps(const Timeline& timeline, size_t first, size_t last, int threads) {
  std::vector<Timeline> ones;
  for (StepSlice& slice : SliceSteps(timeline, first, last)) ones.push_back(std::move(slice.one));
  return AnalyseOneSteps(ones, threads);
}

}  // namespace jobviz
