// --fail-on: conditions on the summary that fail a CI job (exit 3).
//
//   bubble_ratio>0.35              a number in the summary
//   steps.duration_us.p95>250000   an aggregate over an array's field:
//                                  min, max, mean, sum, count, p50, p95, p99
//   job_types.forward.mean_us>=900 object keys as path segments
//   bubble_ratio > baseline + 0.02 against the same metric of --baseline
//   steps.duration_us.p50 > baseline * 1.05     (+, -, * or baseline alone)
//   stopped                        the run did not finish its last step
//                                  (stopped.unfinished_steps > 0)
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace jobviz {

struct Condition {
  std::string text;  // as given
  std::string path;
  std::string op;  // > >= < <= == !=
  double threshold = 0;  // the number, or what the baseline's value is changed by
  enum class Base { kNone, kSame, kPlus, kMinus, kTimes } base = Base::kNone;  // relative to --baseline
};

// The threshold of `condition`: its number, or the baseline's value of its
// metric changed as it says. `baseline` is null without --baseline.
std::optional<double> Threshold(const Condition& condition, const nlohmann::json* baseline, std::string* error);

// A name as a key in brackets (workers[KEY]): '[', ']' and '\\' escaped
// with a backslash, so that every name, however odd, names its element.
std::string GateKey(const std::string& name);

// Parses "METRIC OP NUMBER"; the number must be finite.
std::optional<Condition> ParseCondition(const std::string& text, std::string* error);

// Whether `path` can name a number in a summary of shape `schema`
// (SummarySchema(): its kAnyKey objects take any key). Checked on the
// command line, before any log is read.
bool CheckMetricPath(const nlohmann::json& schema, const std::string& path, std::string* error);

// The value `path` names in `summary`, or nullopt with `error` set.
std::optional<double> ResolveMetric(const nlohmann::json& summary, const std::string& path, std::string* error);

// True when the condition holds (the gate fails) against `threshold`.
bool Holds(const Condition& condition, double value, double threshold);

// A --fail-on condition checked against a summary.
struct GateResult {
  Condition condition;
  std::optional<double> value;  // nullopt: the path names nothing in these logs (`error` says why)
  std::optional<double> baseline;  // the baseline's value, for relative conditions
  double threshold = 0;
  bool failed = false;          // the condition holds
  std::string error;
  // "bubble_ratio is 43.9% (threshold 35.0%)": durations (_us) and ratios
  // in the tables' units.
  std::string Message() const;
};

// "Gates: 1 of 2 failed", "Gates: all 3 passed": what opens a report.
std::string GatesVerdict(const std::vector<GateResult>& gates);

std::vector<GateResult> EvaluateGates(const std::vector<Condition>& gates, const nlohmann::json& summary,
                                      const nlohmann::json* baseline = nullptr);

}  // namespace jobviz
