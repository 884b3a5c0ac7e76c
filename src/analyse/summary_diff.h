// `jobviz diff`: the metrics of two summaries side by side. Each metric is
// resolved in both with the --fail-on paths, so the two tools agree on what a
// name means.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace jobviz {

// What a metric's number is: a fraction (bubbles, what-if gains), a time in
// microseconds (the `_us` metrics), or a count.
enum class MetricUnit { kRatio, kMicros, kCount };
// Which way is an improvement. kNeither where the number alone cannot say:
// a worker's or stage's lower bubble may be a slower GPU that idles less,
// the ideal bubble and the job and step counts follow the configuration.
enum class Better { kLower, kHigher, kNeither };
enum class Verdict { kWorse, kBetter, kSame, kNone };  // kNone: no direction, or a side missing

struct MetricChange {
  std::string metric;                // a --fail-on path, e.g. steps.duration_us.p95
  std::optional<double> base, now;   // nullopt: not in that summary
  MetricUnit unit = MetricUnit::kCount;
  Better better = Better::kNeither;
  std::optional<double> change() const { return base && now ? std::optional<double>(*now - *base) : std::nullopt; }
  // The change relative to the base; nullopt when either is missing or the base is 0.
  std::optional<double> relative() const;
  // How much the change matters, comparable across metrics: a ratio's change
  // in fractions (0.05 = 5 points), any other change relative to its base
  // (1 when the base is 0); 0 when a side is missing or nothing changed.
  double significance() const;
  // Worse or better by `better`; the same under half a point (ratios) or 1% (others).
  Verdict verdict() const;
  // What the change does to a step, as a share of the base run's step time
  // (DiffSummaries sets it): a time per step over the step, a job type's
  // mean times its jobs per worker and step, a stage's mean times its
  // micro-batches, a ratio's change in points; 0 for counts. The rows are
  // ranked by it: a 47 us stall change (+887%) below a 5 ms slower step.
  double effect = 0;
  // "stage 2 backward", "backward jobs", "stall on the critical path": the
  // metric in words, for the verdict.
  std::string label;
  // A worker's row: its stage where the summaries say; the table folds the
  // workers it does not show under it ("stage 2", also the JSON's group).
  std::optional<std::int64_t> stage;
};

// The one-line verdict a diff opens with: "step time +17.1% (31.09 ms ->
// 36.41 ms): stage 2 backward +30.0%", the change of the step time and the
// change that explains most of it; or that the step time held.
std::string DiffVerdict(const std::vector<MetricChange>& rows);

// The unit and the better direction of a metric, from its --fail-on path.
void ClassifyMetric(MetricChange& row);

// Overall and per-worker bubble, step time p50/p95, job-type means,
// the critical path by cause, what-if gains, slow workers, counts: every metric either summary has, in a fixed order.
// Workers are matched by (machine index, worker index), not by name.
// Ranked by effect on the step time (MetricChange::effect), then by
// significance, then the metrics only one summary has.
std::vector<MetricChange> DiffSummaries(const nlohmann::json& base, const nlohmann::json& now);

// What makes two runs different experiments rather than a regression: their
// micro-batches, stages, model chunks, schedule or worker count ("micro-batches
// 8 -> 4"); empty when they agree.
std::vector<std::string> ConfigurationChanges(const nlohmann::json& base, const nlohmann::json& now);

// What the diff says before any number: "the new run stopped in step 3: ...",
// for each side whose stop report shows a stop (stopped, a suspect, an
// all-reduce hang, logs ending mid-step); its step figures leave that step out.
std::vector<std::string> StopChanges(const nlohmann::json& base, const nlohmann::json& now);

}  // namespace jobviz
