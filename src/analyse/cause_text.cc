#include "analyse/cause_text.h"

#include <cmath>
#include <cstdio>

#include "model/time_value.h"

namespace jobviz {

namespace {

std::string Gain(double gain) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", -gain * 100.0);
  return buf;
}

std::string Share(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", ratio * 100.0);
  return buf;
}

Nanos PerStep(const Bottleneck& b, Nanos total) { return b.steps ? total / static_cast<Nanos>(b.steps) : 0; }

// The link with the most hand-off time on the critical paths: "stage 1→2 forward".
std::string WorstLink(const PathBreakdown& path) {
  const PathBreakdown::HandOff* worst = nullptr;
  for (const auto& h : path.hand_offs)
    if (!worst || h.time > worst->time) worst = &h;
  if (!worst) return "";
  return "stage " + std::to_string(worst->from) + "\u2192" + std::to_string(worst->to) + " " +
         (worst->from < worst->to ? "forward" : "backward");
}

// "machine2 worker 5, step41, backward of micro-batch 3: 3.10 ms against 1.00 ms"
std::string OutlierText(const OutlierJob& o) {
  return o.worker + (o.step != kNoStep ? ", " + StepName(o.step) : "") + ", " + o.type + " of micro-batch " +
         std::to_string(o.micro_batch) + ": " + FormatDuration(o.duration) + " against " + FormatDuration(o.median);
}

std::string SlowWorkersText(const std::vector<SlowWorker>& slow) {
  std::string who = slow.front().name + " (" + FactorText(slow.front().factor) + " " + slow.front().compared_with + ")";
  if (slow.size() > 1) who += " and " + std::to_string(slow.size() - 1) + " more";
  return who;
}

}  // namespace

std::string FactorText(double factor) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", factor);
  return buf;
}

std::string ChangeText(WhatIfKind kind, const CauseFacts& facts, const Bottleneck& b) {
  const std::vector<SlowWorker>& slow = *facts.slow_workers;
  switch (kind) {
    case WhatIfKind::kBalancedStages:
      return "stage " + std::to_string(facts.slowest_stage) + "'s jobs at the median speed of the other stages";
    case WhatIfKind::kFreeHandOffs: return "every hand-off without latency";
    case WhatIfKind::kNoOutliers: return "every outlier job (over 1.5x its worker's median) at that median";
    case WhatIfKind::kNoStall: return "no stall: jobs start as soon as their worker and inputs are ready";
    case WhatIfKind::kNoSlowWorkers:
      return slow.empty() ? "no slow worker found" : std::to_string(slow.size()) + " slow worker" + (slow.size() == 1 ? "" : "s") +
                                                         (slow.size() == 1 ? " at the speed of " : ", each at the speed of ") +
                                                         slow.front().compared_with;
    case WhatIfKind::kNoStepGaps: return "no time between steps (" + FormatDuration(b.step_gap) + " each)";
    case WhatIfKind::kAll: case WhatIfKind::kCount: break;
  }
  return "all of the above";
}

std::string CauseText(const WhatIf& w, const CauseFacts& facts, const Bottleneck& b) {
  const std::string save = " would save " + FormatDuration(w.saved) + " per step (" + Gain(w.gain) + ")";
  switch (w.kind) {
    case WhatIfKind::kBalancedStages:
      return "stage " + std::to_string(facts.slowest_stage) + " is the bottleneck (" + FactorText(facts.stage_factor) +
             " the other stages' job time): balancing it" + save;
    case WhatIfKind::kFreeHandOffs:
      return "hand-offs take " + FormatDuration(PerStep(b, b.path.hand_off_total())) + " per step on the critical path (most on " +
             WorstLink(b.path) + "): free hand-offs" + save;
    case WhatIfKind::kNoOutliers: {
      std::string text = std::to_string(b.outlier_count) + " outlier job" + (b.outlier_count == 1 ? "" : "s");
      if (!b.outliers.empty()) text += " (the worst: " + OutlierText(b.outliers.front()) + ")";
      return text + (b.outlier_count == 1 ? ": at its worker's median" : ": at their workers' medians") + save;
    }
    case WhatIfKind::kNoStall:
      return "stalls (a worker free, its inputs there, yet waiting: what the logs do not show): removing them" + save;
    case WhatIfKind::kNoSlowWorkers: {
      const std::vector<SlowWorker>& slow = *facts.slow_workers;
      return "slow worker" + std::string(slow.size() > 1 ? "s " : " ") + SlowWorkersText(slow) +
             (slow.size() > 1 ? ": each at its peers' speed" : ": at its peers' speed") + save;
    }
    case WhatIfKind::kNoStepGaps:
      // Its share of the run, not a time per step: spread over the steps, the
      // gap reads gap x (steps - 1) / steps, which moves with the step count.
      return "time between steps (" + FormatDuration(b.step_gap) +
             " each, outside the pipeline: data loading, host work, logging): " + Share(w.gain) + " of the run";
    case WhatIfKind::kAll: case WhatIfKind::kCount: break;
  }
  return "";
}

std::string PlainVerdict(const Bottleneck& b, const CauseFacts& facts, double bubble, const double* ideal_bubble) {
  if (!b.ran) return "";
  if (b.causes.empty()) {
    std::string text = "Nothing here is worth fixing: no change the replays try would shorten a step by " +
                       Share(kCauseFloor) + " or more";
    if (ideal_bubble)
      text += "; the bubble (" + Share(bubble) + ") is " + (bubble <= *ideal_bubble + 0.05 ? "close to " : "above ") +
              "what the schedule itself leaves idle (" + Share(*ideal_bubble) + ")" +
              (bubble <= *ideal_bubble + 0.05 ? ": more micro-batches per step, or more model chunks per stage, would shrink it" : "");
    return text + ".";
  }
  const Cause& top = b.causes.front();
  const WhatIf& w = b.what_if[static_cast<size_t>(top.kind)];
  const std::string cut = " would cut each step by about " + FormatDuration(w.saved) + " (" + Share(w.gain) + ").";
  const std::string shorter = " each step would be about " + FormatDuration(w.saved) + " (" + Share(w.gain) + ") shorter.";
  switch (top.kind) {
    case WhatIfKind::kBalancedStages:
      return "Stage " + std::to_string(facts.slowest_stage) + " is " + FactorText(facts.stage_factor) +
             " slower than the others; moving about " + Share(1 - 1 / std::max(1.0, facts.stage_factor)) +
             " of its layers to other stages" + cut;
    case WhatIfKind::kNoSlowWorkers: {
      const SlowWorker& first = facts.slow_workers->front();
      const size_t more = facts.slow_workers->size() - 1;
      return first.name + " runs its jobs " + FactorText(first.factor) + " slower than " + first.compared_with +
             (more ? " (and " + std::to_string(more) + (more == 1 ? " more worker is slow)" : " more workers are slow)") : "") +
             ": check that GPU and its host (clocks, temperature, other processes); " +
             (more ? "at their peers' speed," : "at its peers' speed,") + shorter;
    }
    case WhatIfKind::kFreeHandOffs:
      return "Hand-offs between stages take " + FormatDuration(PerStep(b, b.path.hand_off_total())) +
             " per step on the critical path, most on " + WorstLink(b.path) +
             "; a faster link, or sends that overlap compute," + cut;
    case WhatIfKind::kNoOutliers: {
      std::string text = std::to_string(b.outlier_count) + " job" + (b.outlier_count == 1 ? "" : "s") +
                         (b.outlier_count == 1 ? " took more than 1.5x its worker's usual time" : " took more than 1.5x their workers' usual time");
      if (!b.outliers.empty()) text += " (the worst: " + OutlierText(b.outliers.front()) + ")";
      return text + "; without such hiccups (page faults, preempted host threads, retried collectives)," + shorter;
    }
    case WhatIfKind::kNoStall:
      return "Workers sat idle with their inputs ready for " + FormatDuration(PerStep(b, b.path.stall)) +
             " per step on the critical path: host-side waits the logs do not show (data loading, Python, synchronisation); "
             "removing them" + cut;
    case WhatIfKind::kNoStepGaps:
      // The gap and its share of the run: a per-step saving would read
      // gap x (steps - 1) / steps, a figure that moves with the step count.
      return "Nothing runs for " + FormatDuration(b.step_gap) + " between steps, " + Share(w.gain) +
             " of the run: time outside the pipeline (data loading, host work, logging, checkpoints).";
    case WhatIfKind::kAll: case WhatIfKind::kCount: break;
  }
  return "";
}

}  // namespace jobviz
