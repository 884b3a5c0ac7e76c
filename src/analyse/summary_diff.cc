#include "analyse/summary_diff.h"

#include <set>

#include "analyse/fail_on.h"

namespace jobviz {

namespace {

std::optional<double> At(const nlohmann::json& summary, const std::string& path) {
  std::string error;
  return ResolveMetric(summary, path, &error);
}

// Keys of an object member in either summary, sorted.
std::set<std::string> KeysOf(const nlohmann::json& a, const nlohmann::json& b, const char* member) {
  std::set<std::string> keys;
  for (const nlohmann::json* s : {&a, &b})
    if (s->contains(member) && (*s)[member].is_object())
      for (const auto& item : (*s)[member].items()) keys.insert(item.key());
  return keys;
}

// A worker's bubble ratio by its name ("machine0 worker 1").
std::optional<double> WorkerBubble(const nlohmann::json& summary, const std::string& name) {
  if (!summary.contains("workers") || !summary["workers"].is_array()) return std::nullopt;
  for (const auto& worker : summary["workers"])
    if (worker.is_object() && worker.contains("name") && worker["name"].is_string() && worker["name"] == name &&
        worker.contains("bubble_ratio") &&
        worker["bubble_ratio"].is_number())
      return worker["bubble_ratio"].get<double>();
  return std::nullopt;
}

std::set<std::string> WorkerNames(const nlohmann::json& a, const nlohmann::json& b) {
  std::set<std::string> names;
  for (const nlohmann::json* s : {&a, &b})
    if (s->contains("workers") && (*s)["workers"].is_array())
      for (const auto& worker : (*s)["workers"])
        if (worker.is_object() && worker.contains("name") && worker["name"].is_string()) names.insert(worker["name"]);
  return names;
}

// The stages of the per-stage table in either summary.
std::set<std::int64_t> Stages(const nlohmann::json& a, const nlohmann::json& b) {
  std::set<std::int64_t> stages;
  for (const nlohmann::json* s : {&a, &b})
    if (s->contains("stage_table") && (*s)["stage_table"].is_array())
      for (const auto& stage : (*s)["stage_table"])
        if (stage.is_object() && stage.contains("stage") && stage["stage"].is_number_integer())
          stages.insert(stage["stage"].get<std::int64_t>());
  return stages;
}

}  // namespace

std::optional<double> MetricChange::relative() const {
  if (!base || !now || *base == 0) return std::nullopt;
  return (*now - *base) / *base;
}

std::vector<MetricChange> DiffSummaries(const nlohmann::json& base, const nlohmann::json& now) {
  std::vector<MetricChange> rows;
  auto add = [&](const std::string& path) {
    MetricChange row{path, At(base, path), At(now, path)};
    if (row.base || row.now) rows.push_back(row);
  };
  for (const char* path : {"bubble_ratio", "ideal_bubble_ratio", "steps.duration_us.p50", "steps.duration_us.p95",
                           "steps.step.count"})
    add(path);
  for (const std::string& type : KeysOf(base, now, "job_types")) add("job_types." + type + ".mean_us");
  // Why the bubble is what it is: the critical path per step by cause, and what each fix would gain.
  for (const char* path : {"bottleneck.replayed_step_us", "bottleneck.critical_path.compute_us",
                           "bottleneck.critical_path.hand_off_us", "bottleneck.critical_path.stall_us",
                           "bottleneck.critical_path.step_start_us", "bottleneck.critical_path.step_gaps_us"})
    add(path);
  for (const std::string& what_if : KeysOf(base, now, "what_if")) add("what_if." + what_if + ".gain");
  for (const char* path : {"slow_workers", "counts.jobs", "counts.skipped"}) add(path);
  // Hybrid runs: each stage's times and bubble, and the hybrid findings.
  for (const std::int64_t stage : Stages(base, now))
    for (const char* field : {"bubble_ratio", "forward_mean_us", "backward_mean_us"}) {
      const std::string path = "stage_table[" + std::to_string(stage) + "]." + field;
      rows.push_back({path, At(base, path), At(now, path)});
    }
  for (const char* path : {"lagging_peers.behind_us.count", "lagging_peers.behind_us.max", "last_replicas.late_by_us.max"})
    add(path);
  for (const std::string& name : WorkerNames(base, now)) {
    MetricChange row{"workers[" + name + "].bubble_ratio", WorkerBubble(base, name), WorkerBubble(now, name)};
    rows.push_back(row);
  }
  return rows;
}

}  // namespace jobviz
