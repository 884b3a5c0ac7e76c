#include "analyse/summary_diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string_view>

#include "analyse/fail_on.h"
#include "analyse/summary_workers.h"

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

// Workers are matched by (machine index, worker index), not by name: a
// single machine's workers are named after its log directory, which differs
// between a baseline stored in one place and a run in another.
using WorkerKey = std::pair<std::int64_t, std::int64_t>;

struct WorkerPair {
  std::string name;  // the new run's (else the base's): a valid --fail-on element there
  std::optional<double> base, now;
  std::optional<std::int64_t> stage;  // the new run's (else the base's), where the topology is known
};

std::map<WorkerKey, WorkerPair> MatchWorkers(const nlohmann::json& base, const nlohmann::json& now) {
  std::map<WorkerKey, WorkerPair> workers;
  for (const bool is_now : {false, true}) {  // (base and now may be one document)
    const nlohmann::json* s = is_now ? &now : &base;
    if (!s->contains("workers") || !(*s)["workers"].is_array()) continue;
    for (const auto& worker : (*s)["workers"]) {
      if (!worker.is_object() || !worker.contains("name") || !worker["name"].is_string() || !worker.contains("machine") ||
          !worker["machine"].is_number_integer() || !worker.contains("worker") || !worker["worker"].is_number_integer())
        continue;
      WorkerPair& pair = workers[{worker["machine"].get<std::int64_t>(), worker["worker"].get<std::int64_t>()}];
      if (is_now || pair.name.empty()) pair.name = worker["name"].get<std::string>();
      if (worker.contains("stage") && worker["stage"].is_number_integer() && (is_now || !pair.stage))
        pair.stage = worker["stage"].get<std::int64_t>();
      if (worker.contains("bubble_ratio") && worker["bubble_ratio"].is_number())
        (is_now ? pair.now : pair.base) = worker["bubble_ratio"].get<double>();
    }
  }
  // A folded summary lists only some workers: one listed on one side only
  // is not a worker that came or went.
  if (SummaryFoldsWorkers(base) || SummaryFoldsWorkers(now))
    std::erase_if(workers, [](const auto& item) { return !item.second.base || !item.second.now; });
  return workers;
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

MetricChange Row(std::string metric, std::optional<double> base, std::optional<double> now) {
  MetricChange row;
  row.metric = std::move(metric);
  row.base = base;
  row.now = now;
  return row;
}

// A number of a summary, 0 when it has none.
double Number(const nlohmann::json& summary, const std::string& path) { return At(summary, path).value_or(0); }

// MetricChange::effect and label, from the base run's step time and counts.
void SetEffect(const nlohmann::json& base, MetricChange* row) {
  const std::string& m = row->metric;
  const auto delta = row->change();
  const double step = Number(base, "steps.duration_us.p50");
  if (!delta) return;
  if (row->unit == MetricUnit::kRatio) {
    row->effect = m.rfind("workers[", 0) == 0 ? 0 : std::fabs(*delta);
    row->label = m;
    return;
  }
  if (row->unit != MetricUnit::kMicros || step <= 0) return;
  double per_step = 1;  // how many times the metric's time falls in a step (of one worker)
  if (m.rfind("job_types.", 0) == 0) {
    const std::string type = m.substr(10, m.size() - 10 - 8);  // job_types.TYPE.mean_us
    const double steps = std::max(1.0, Number(base, "steps.step.count")), workers = std::max<double>(1, SummaryWorkerCount(base));
    per_step = Number(base, "job_types." + type + ".count") / steps / workers;
    row->label = type + " jobs";
  } else if (m.rfind("stage_table[", 0) == 0) {
    const std::string stage = m.substr(12, m.find(']') - 12);
    const bool forward = m.find("forward") != std::string::npos;
    per_step = std::max(1.0, Number(base, "micro_batches"));
    row->label = "stage " + stage + (forward ? " forward" : " backward");
  } else if (m.rfind("bottleneck.critical_path.", 0) == 0) {
    const std::string part = m.substr(25, m.size() - 25 - 3);  // bottleneck.critical_path.PART_us
    const std::map<std::string, std::string> words = {{"compute", "compute"}, {"hand_off", "hand-offs"},
                                                      {"all_reduce", "all-reduce waits"}, {"stall", "stalls"},
                                                      {"step_start", "step start"}, {"step_gaps", "time between steps"}};
    const auto it = words.find(part);
    row->label = (it != words.end() ? it->second : part) + " on the critical path";
  } else {
    row->label = m;
  }
  row->effect = std::fabs(*delta) * per_step / step;
}

}  // namespace

std::vector<std::string> ConfigurationChanges(const nlohmann::json& base, const nlohmann::json& now) {
  std::vector<std::string> changes;
  const auto text = [](const nlohmann::json& summary, const char* key) -> std::string {
    if (!summary.contains(key)) return "-";
    const nlohmann::json& value = summary[key];
    if (std::string(key) == "workers") return value.is_array() ? std::to_string(SummaryWorkerCount(summary)) : "-";
    return value.is_string() ? value.get<std::string>() : value.dump();
  };
  for (const auto& [key, label] : {std::pair{"micro_batches", "micro-batches"}, {"stages", "stages"},
                                   {"model_chunks", "model chunks"}, {"schedule", "schedule"}, {"workers", "workers"}}) {
    const std::string was = text(base, key), is = text(now, key);
    if (was != is) changes.push_back(std::string(label) + " " + was + " -> " + is);
  }
  return changes;
}

std::optional<double> MetricChange::relative() const {
  if (!base || !now || *base == 0) return std::nullopt;
  return (*now - *base) / *base;
}

double MetricChange::significance() const {
  const auto delta = change();
  if (!delta || *delta == 0) return 0;
  if (unit == MetricUnit::kRatio) return std::fabs(*delta);
  const auto rel = relative();
  return rel ? std::fabs(*rel) : 1;
}

Verdict MetricChange::verdict() const {
  if (better == Better::kNeither || !change()) return Verdict::kNone;
  const double threshold = unit == MetricUnit::kRatio ? 0.005 : 0.01;
  if (significance() < threshold) return Verdict::kSame;
  const bool rose = *change() > 0;
  return rose == (better == Better::kHigher) ? Verdict::kBetter : Verdict::kWorse;
}

void ClassifyMetric(MetricChange& row) {
  const std::string& m = row.metric;
  const auto ends_with = [&](std::string_view tail) { return m.size() >= tail.size() && m.compare(m.size() - tail.size(), tail.size(), tail) == 0; };
  const bool per_row = m.rfind("workers[", 0) == 0 || m.rfind("stage_table[", 0) == 0;
  if (ends_with("bubble_ratio") || ends_with(".gain")) {
    row.unit = MetricUnit::kRatio;
    // The run's bubble and what a fix would still gain: lower is better. A
    // worker's or stage's own bubble drops when it is the slow one.
    row.better = per_row || m == "ideal_bubble_ratio" ? Better::kNeither : Better::kLower;
  } else if (ends_with(".count") || m == "slow_workers" || m.rfind("counts.", 0) == 0) {
    row.unit = MetricUnit::kCount;
    const bool fewer_is_better = m == "slow_workers" || m == "counts.skipped" || m == "lagging_peers.behind_us.count";
    row.better = fewer_is_better ? Better::kLower : Better::kNeither;
  } else {  // the _us metrics: step, job, critical-path and lag times
    row.unit = MetricUnit::kMicros;
    row.better = Better::kLower;
  }
}

std::vector<MetricChange> DiffSummaries(const nlohmann::json& base, const nlohmann::json& now) {
  std::vector<MetricChange> rows;
  auto add = [&](const std::string& path) {
    const MetricChange row = Row(path, At(base, path), At(now, path));
    if (row.base || row.now) rows.push_back(row);
  };
  for (const char* path : {"bubble_ratio", "ideal_bubble_ratio", "steps.duration_us.p50", "steps.duration_us.p95",
                           "steps.step.count"})
    add(path);
  for (const std::string& type : KeysOf(base, now, "job_types")) add("job_types." + type + ".mean_us");
  // Why the bubble is what it is: the critical path per step by cause, and what each fix would gain.
  for (const char* path : {"bottleneck.replayed_step_us", "bottleneck.critical_path.compute_us",
                           "bottleneck.critical_path.hand_off_us", "bottleneck.critical_path.all_reduce_us",
                           "bottleneck.critical_path.stall_us",
                           "bottleneck.critical_path.step_start_us", "bottleneck.critical_path.step_gaps_us"})
    add(path);
  for (const std::string& what_if : KeysOf(base, now, "what_if")) add("what_if." + what_if + ".gain");
  for (const char* path : {"slow_workers", "counts.jobs", "counts.skipped"}) add(path);
  // Hybrid runs: each stage's times and bubble, and the hybrid findings.
  for (const std::int64_t stage : Stages(base, now))
    for (const char* field : {"bubble_ratio", "forward_mean_us", "backward_mean_us"}) {
      const std::string path = "stage_table[" + std::to_string(stage) + "]." + field;
      rows.push_back(Row(path, At(base, path), At(now, path)));
    }
  for (const char* path : {"lagging_peers.behind_us.count", "lagging_peers.behind_us.max", "last_replicas.late_by_us.max"})
    add(path);
  for (const auto& [key, worker] : MatchWorkers(base, now)) {
    rows.push_back(Row("workers[" + GateKey(worker.name) + "].bubble_ratio", worker.base, worker.now));
    rows.back().stage = worker.stage;
  }
  for (MetricChange& row : rows) {
    ClassifyMetric(row);
    SetEffect(base, &row);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const MetricChange& a, const MetricChange& b) {
    const bool a_both = a.base && a.now, b_both = b.base && b.now;
    if (a_both != b_both) return a_both;
    if (a.effect != b.effect) return a.effect > b.effect;
    return a.significance() > b.significance();
  });
  return rows;
}

std::string DiffVerdict(const std::vector<MetricChange>& rows) {
  const MetricChange* step = nullptr;
  const MetricChange* why = nullptr;
  for (const MetricChange& row : rows) {
    if (row.metric == "steps.duration_us.p50") step = &row;
    const bool explains = row.metric.rfind("job_types.", 0) == 0 || row.metric.rfind("stage_table[", 0) == 0 ||
                          (row.metric.rfind("bottleneck.critical_path.", 0) == 0 && row.metric != "bottleneck.critical_path.total_us");
    if (explains && row.unit == MetricUnit::kMicros && row.change() && row.effect > 0 && (!why || row.effect > why->effect)) why = &row;
  }
  const auto percent = [](double ratio) {
    char text[32];
    std::snprintf(text, sizeof text, "%+.1f%%", ratio * 100);
    return std::string(text);
  };
  const auto ms = [](double us) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f ms", us / 1000);
    return std::string(text);
  };
  if (!step || !step->relative()) return "step time: not in both runs";
  const double change = *step->relative();
  std::string text = std::fabs(change) < 0.01 ? "step time unchanged (" + percent(change) + ", " + ms(*step->now) + ")"
                                              : "step time " + percent(change) + " (" + ms(*step->base) + " -> " + ms(*step->now) + ")";
  if (why && why->effect >= 0.005 && why->relative())
    text += std::string(std::fabs(change) < 0.01 ? "; the largest change: " : ": ") + why->label + " " + percent(*why->relative());
  return text;
}

std::vector<std::string> StopChanges(const nlohmann::json& base, const nlohmann::json& now) {
  std::vector<std::string> lines;
  for (const auto& [side, doc] : {std::pair<const char*, const nlohmann::json*>{"base", &base}, {"new", &now}}) {
    const auto stopped = doc->find("stopped");
    if (stopped == doc->end() || !stopped->is_object()) continue;
    const std::string kind = stopped->value("kind", "");
    if (kind != "stopped" && kind != "suspect" && kind != "all_reduce" && kind != "cut_together") continue;
    const auto step = stopped->find("step");
    lines.push_back(std::string("the ") + side + " run stopped" +
                    (step != stopped->end() && step->is_number_integer() ? " in step " + std::to_string(step->get<std::int64_t>()) : "") +
                    ": " + stopped->value("sentence", ""));
  }
  return lines;
}

}  // namespace jobviz
