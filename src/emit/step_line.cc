#include "emit/step_line.h"

#include <cstdio>

#include "analyse/cause_text.h"
#include "emit/summary_tables.h"
#include "model/time_value.h"

namespace jobviz {

namespace {

constexpr size_t kSlowShown = 3;

std::string SignedPercent(double gain) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "-%.1f%%", gain * 100);
  return buf;
}

}  // namespace

std::string StepLine(const StepReport& r) {
  std::string line = "step " + std::to_string(StepNumber(r.span.step)) + "  " + FormatDuration(r.span.end - r.span.start) +
                     "  bubble " + Percent(r.bubble_ratio);
  if (r.ideal_bubble) line += " (ideal " + Percent(*r.ideal_bubble) + ")";
  line += "  top cause: ";
  line += r.top_cause ? r.cause_label + " (" + SignedPercent(r.top_cause->gain) + ")" : "none";
  if (!r.slow_workers.empty()) {
    line += "  slow:";
    for (size_t i = 0; i < r.slow_workers.size() && i < kSlowShown; ++i)
      line += (i ? ", " : " ") + r.slow_workers[i].name + " " + FactorText(r.slow_workers[i].factor);
    if (r.slow_workers.size() > kSlowShown) line += " and " + std::to_string(r.slow_workers.size() - kSlowShown) + " more";
  }
  return line;
}

nlohmann::json StepJson(const StepReport& r) {
  using json = nlohmann::json;
  json out = {{"step", StepNumber(r.span.step)},     {"start_us", ToMicros(r.span.start)},
              {"end_us", ToMicros(r.span.end)},        {"start_ns", r.span.start},
              {"end_ns", r.span.end},                {"duration_us", ToMicros(r.span.end - r.span.start)},
              {"jobs", r.jobs},                      {"bubble_ratio", r.bubble_ratio},
              {"ideal_bubble_ratio", r.ideal_bubble ? json(*r.ideal_bubble) : json(nullptr)}};
  if (r.top_cause) {
    out["top_cause"] = {{"what_if", WhatIfKey(r.top_cause->kind)}, {"label", r.cause_label},
                        {"text", r.top_cause->text},               {"saved_us", ToMicros(r.top_cause->saved)},
                        {"gain", r.top_cause->gain}};
  } else {
    out["top_cause"] = nullptr;
  }
  out["slow_workers"] = json::array();
  for (const StepSlowWorker& slow : r.slow_workers) out["slow_workers"].push_back({{"worker", slow.name}, {"factor", slow.factor}});
  return out;
}

}  // namespace jobviz
