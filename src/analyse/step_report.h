// One finished step analysed on its own, as `jobviz follow` reports it the
// moment every worker has moved past it: its time, its bubble against the
// schedule's ideal, the cause whose removal gains most in that step, and
// the workers slower than their peers in it. The step is analysed as a run
// of that one step (analyse/analysis.h), so each figure means what the
// same figure of the summary means.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyse/bottleneck.h"
#include "model/model.h"

namespace jobviz {

struct StepSlowWorker {
  std::string name;  // "machine2 worker 5"
  double factor = 1;
};

struct StepReport {
  StepSpan span;
  size_t jobs = 0;
  double bubble_ratio = 0;
  std::optional<double> ideal_bubble;
  std::optional<Cause> top_cause;  // a cause worth fixing in this step (gain >= kCauseFloor)
  std::string cause_label;         // "stage 2", "hand-offs", ...: the top cause in a word or two
  std::vector<StepSlowWorker> slow_workers;  // slowest first
};

// Steps [first, last) of `timeline` (steps found, roles placed), each
// analysed alone, on up to `threads` threads.
std::vector<StepReport> AnalyseSteps(const Timeline& timeline, size_t first, size_t last, int threads);
// The same, for steps already cut out (model/step_window.h SliceSteps).
std::vector<StepReport> AnalyseOneSteps(const std::vector<Timeline>& ones, int threads);

// "stage 2", "hand-offs", "stalls": what a what-if removes, in a word or two.
std::string CauseLabel(WhatIfKind kind, int slowest_stage);

}  // namespace jobviz
