// `jobviz diff`: the metrics of two summaries side by side. Each metric is
// resolved in both with the --fail-on paths, so the two tools agree on what a
// name means.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace jobviz {

struct MetricChange {
  std::string metric;                // a --fail-on path, e.g. steps.duration_us.p95
  std::optional<double> base, now;   // nullopt: not in that summary
  std::optional<double> change() const { return base && now ? std::optional<double>(*now - *base) : std::nullopt; }
  // The change relative to the base; nullopt when either is missing or the base is 0.
  std::optional<double> relative() const;
};

// Overall and per-worker bubble, step time p50/p95, job-type means,
// the critical path by cause, what-if gains, slow workers, counts: every metric either summary has, in a fixed order.
// Workers are matched by (machine index, worker index), not by name.
std::vector<MetricChange> DiffSummaries(const nlohmann::json& base, const nlohmann::json& now);

// What makes two runs different experiments rather than a regression: their
// micro-batches, stages, model chunks, schedule or worker count ("micro-batches
// 8 -> 4"); empty when they agree.
std::vector<std::string> ConfigurationChanges(const nlohmann::json& base, const nlohmann::json& now);

}  // namespace jobviz
