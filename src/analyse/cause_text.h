// The bottleneck analysis in words (analyse/bottleneck.h): what each
// what-if changed, each cause with what fixing it gains, and the one plain
// sentence a report opens with: what is wrong and what to do, from the
// analysis's own numbers. Terms: docs/analysis.md ("Glossary").
#pragma once

#include <string>
#include <vector>

#include "analyse/bottleneck.h"

namespace jobviz {

// What the words need besides the bottleneck itself.
struct CauseFacts {
  int slowest_stage = -1;
  double stage_factor = 1;  // the slowest stage's job time over the others' for the same jobs
  const std::vector<SlowWorker>* slow_workers = nullptr;
};

// "1.30x": a speed or slowdown factor, as every report writes one.
std::string FactorText(double factor);

// "stage 2's jobs at the median speed of the other stages"
std::string ChangeText(WhatIfKind kind, const CauseFacts& facts, const Bottleneck& b);

// "stage 2 is the bottleneck (1.30x the other stages' job time): balancing it would save 4.7 ms per step (-12.4%)"
std::string CauseText(const WhatIf& w, const CauseFacts& facts, const Bottleneck& b);

// The first line of every report: "Stage 2 is 1.30x slower than the
// others; moving about 23% of its layers to other stages would cut each
// step by about 4.7 ms (12%)." Or that nothing is worth fixing, and why the
// bubble is what it is.
std::string PlainVerdict(const Bottleneck& b, const CauseFacts& facts, double bubble, const double* ideal_bubble);

}  // namespace jobviz
