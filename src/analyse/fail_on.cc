#include "analyse/fail_on.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "analyse/analysis.h"
#include "analyse/summary.h"
#include "analyse/summary_workers.h"
#include "model/time_value.h"

namespace jobviz {

namespace {

const char* const kAggregates[] = {"min", "max", "mean", "sum", "count", "p50", "p95", "p99"};

std::string Trimmed(std::string s) {
  s.erase(0, s.find_first_not_of(' '));
  s.erase(s.find_last_not_of(' ') + 1);
  return s;
}

std::string KeysOf(const nlohmann::json& object) {
  std::string keys;
  for (const auto& [key, value] : object.items())
    if (key != kAnyKey) keys += (keys.empty() ? "" : ", ") + key;
  return keys;
}

// Where a path leads: a number, or an array with a field and an aggregate.
struct Target {
  const nlohmann::json* node = nullptr;
  std::string field, aggregate;  // set when `node` is an array
};

// "a.b[x.y].c" -> a, b[x.y], c: a dot inside brackets belongs to the key,
// and a backslash there takes the next character as it is (GateKey).
std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> parts(1);
  int depth = 0;
  for (size_t k = 0; k < path.size(); ++k) {
    const char c = path[k];
    if (c == '\\' && depth > 0 && k + 1 < path.size()) {
      parts.back() += c;
      parts.back() += path[++k];
      continue;
    }
    if (c == '.' && depth == 0) {
      parts.emplace_back();
      continue;
    }
    depth += c == '[' ? 1 : c == ']' && depth > 0 ? -1 : 0;
    parts.back() += c;
  }
  return parts;
}

std::string Unescaped(const std::string& key) {
  std::string out;
  for (size_t k = 0; k < key.size(); ++k) out += key[k] == '\\' && k + 1 < key.size() ? key[++k] : key[k];
  return out;
}

// Where `op` first stands outside brackets: a name in them may hold any
// character (a machine called "a>b").
size_t FindOperator(const std::string& text, std::string_view op) {
  int depth = 0;
  for (size_t k = 0; k < text.size(); ++k) {
    const char c = text[k];
    if (c == '\\' && depth > 0) {
      ++k;
    } else if (c == '[') {
      ++depth;
    } else if (c == ']' && depth > 0) {
      --depth;
    } else if (depth == 0 && text.compare(k, op.size(), op) == 0) {
      return k;
    }
  }
  return std::string::npos;
}

// The element of an array of objects that `key` names: in an array whose
// elements have a "name" (workers), the one of that name; in one without
// (stage_table), the one whose "stage" number it is. In the schema
// (`any_key`) the one element.
const nlohmann::json* Element(const nlohmann::json& array, const std::string& key, bool any_key) {
  if (any_key) return array.empty() ? nullptr : &array[0];
  for (const auto& item : array) {
    if (!item.is_object()) continue;
    const auto name = item.find("name");
    if (name != item.end() && name->is_string()) {
      if (name->get<std::string>() == key) return &item;
      continue;  // named: never picked by position or stage (workers[1] is no worker of stage 1)
    }
    const auto stage = item.find("stage");
    if (stage != item.end() && stage->is_number_integer() && std::to_string(stage->get<std::int64_t>()) == key) return &item;
  }
  return nullptr;
}

std::string FoldedWorkersText(const nlohmann::json& root) {
  return "this summary folds its " + std::to_string(SummaryWorkerCount(root)) +
         " workers and lists only some (workers_folded has each stage's and replica's spread; --summary-workers all "
         "lists every worker)";
}

// Follows `path` through objects (kAnyKey matching any key when
// `any_key`) and elements named in brackets (workers[machine0 worker 1],
// stage_table[2]); an array must be followed by a field and an aggregate.
std::optional<Target> Follow(const nlohmann::json& root, const std::string& path, bool any_key, std::string* error) {
  const std::vector<std::string> parts = SplitPath(path);
  const nlohmann::json* node = &root;
  for (size_t i = 0; i < parts.size(); ++i) {
    const size_t open = parts[i].find('[');
    if (open != std::string::npos && parts[i].back() == ']' && node->is_object()) {
      const std::string member = parts[i].substr(0, open),
                        key = Unescaped(parts[i].substr(open + 1, parts[i].size() - open - 2));
      const auto it = node->find(member);
      if (it == node->end() || !it->is_array()) {
        *error = "'" + path + "': no list '" + member + "' in the summary";
        return std::nullopt;
      }
      node = Element(*it, key, any_key);
      if (!node && member == "workers" && SummaryFoldsWorkers(root)) {
        *error = "'" + path + "': " + FoldedWorkersText(root);
        return std::nullopt;
      }
      if (!node) {
        *error = "'" + path + "': no element '" + key + "' in '" + member + "' (elements are named by their \"name\", "
                 "or by \"stage\")";
        return std::nullopt;
      }
      continue;
    }
    if (node->is_object()) {
      auto it = node->find(parts[i]);
      if (it == node->end() && any_key) it = node->find(kAnyKey);
      if (it == node->end()) {
        *error = "'" + path + "': no '" + parts[i] + "' in the summary" +
                 (node->empty() ? "" : " (there: " + KeysOf(*node) + ")");
        return std::nullopt;
      }
      node = &*it;
      continue;
    }
    if (node->is_array()) {
      if (i + 2 != parts.size()) {
        *error = "'" + path + "': after an array give a field and an aggregate, e.g. steps.duration_us.p95";
        return std::nullopt;
      }
      const auto* end = std::end(kAggregates);
      if (std::find(std::begin(kAggregates), end, parts[i + 1]) == end) {
        *error = "'" + path + "': unknown aggregate '" + parts[i + 1] + "' (min, max, mean, sum, count, p50, p95, p99)";
        return std::nullopt;
      }
      // A folded list keeps each stage's most and least idle worker: its
      // min and max are the run's, no other aggregate is.
      if (i == 1 && parts[0] == "workers" && SummaryFoldsWorkers(root) && parts[i + 1] != "min" && parts[i + 1] != "max") {
        *error = "'" + path + "': " + FoldedWorkersText(root) + "; min and max are the run's";
        return std::nullopt;
      }
      return Target{node, parts[i], parts[i + 1]};
    }
    *error = "'" + path + "': '" + parts[i - 1] + "' is a value, not an object";
    return std::nullopt;
  }
  if (node->is_array()) return Target{node, "", "length"};  // a list alone: how many it holds (slow_workers > 0)
  if (!node->is_number()) {
    *error = "'" + path + "' is not a number in the summary";
    return std::nullopt;
  }
  return Target{node, "", ""};
}

std::optional<double> Aggregate(const Target& target, const std::string& path, std::string* error) {
  std::vector<double> values;
  for (const auto& item : *target.node)
    if (item.is_object() && item.contains(target.field) && item[target.field].is_number())
      values.push_back(item[target.field].get<double>());
  const std::string& agg = target.aggregate;
  if (agg == "count") return static_cast<double>(values.size());
  if (values.empty()) {
    *error = "'" + path + "': no values of '" + target.field + "'";
    return std::nullopt;
  }
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  if (agg == "min") return values.front();
  if (agg == "max") return values.back();
  if (agg == "sum") return sum;
  if (agg == "mean") return sum / static_cast<double>(values.size());
  if (agg == "p50") return Percentile(values, 50);
  if (agg == "p95") return Percentile(values, 95);
  return Percentile(values, 99);
}

}  // namespace

namespace {

// "baseline", "baseline + 0.02", "baseline*1.05": sets the condition's base
// and its number; false when `value` does not start with "baseline".
bool ParseRelative(const std::string& value, Condition* c) {
  constexpr std::string_view kBaseline = "baseline";
  if (value.compare(0, kBaseline.size(), kBaseline) != 0) return false;
  const std::string rest = Trimmed(value.substr(kBaseline.size()));
  if (rest.empty()) {
    c->base = Condition::Base::kSame;
    c->threshold = 0;
    return true;
  }
  const char sign = rest[0];
  c->base = sign == '+' ? Condition::Base::kPlus : sign == '-' ? Condition::Base::kMinus
            : sign == '*' ? Condition::Base::kTimes : Condition::Base::kNone;
  const std::string number = Trimmed(rest.substr(1));
  char* end = nullptr;
  c->threshold = std::strtod(number.c_str(), &end);
  if (c->base == Condition::Base::kNone || number.empty() || *end != '\0') c->base = Condition::Base::kNone, c->threshold = NAN;
  return true;
}

}  // namespace

std::string GateKey(const std::string& name) {
  std::string out;
  for (const char c : name) {
    if (c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::optional<Condition> ParseCondition(const std::string& text, std::string* error) {
  // "stopped": the run did not finish its last step (docs/analysis.md, "Where the run stopped").
  if (Trimmed(text) == "stopped") return Condition{text, "stopped.unfinished_steps", ">", 0};
  static const char* kOps[] = {">=", "<=", "==", "!=", ">", "<"};
  for (const char* op : kOps) {
    const size_t at = FindOperator(text, op);
    if (at == std::string::npos) continue;
    Condition c{text, Trimmed(text.substr(0, at)), op, 0};
    const std::string value = Trimmed(text.substr(at + std::string(op).size()));
    if (!ParseRelative(value, &c)) {
      char* end = nullptr;
      c.threshold = std::strtod(value.c_str(), &end);
      if (c.path.empty() || value.empty() || *end != '\0') break;
    } else if (c.path.empty()) {
      break;
    }
    if (!std::isfinite(c.threshold)) {
      *error = "'" + text + "': the threshold must be a finite number, not " + value;
      return std::nullopt;
    }
    return c;
  }
  *error = "'" + text + "': expected METRIC OP NUMBER or METRIC OP baseline [+-*] NUMBER, e.g. bubble_ratio>0.35 "
           "(OP: > >= < <= == !=), or 'stopped'";
  return std::nullopt;
}

bool CheckMetricPath(const nlohmann::json& schema, const std::string& path, std::string* error) {
  const auto target = Follow(schema, path, true, error);
  if (!target) return false;
  if (target->field.empty()) return true;  // a number, or a list's length
  const nlohmann::json& item = target->node->front();
  if (!item.contains(target->field) || !item[target->field].is_number()) {
    *error = "'" + path + "': the summary's array has no number '" + target->field + "' (there: " + KeysOf(item) + ")";
    return false;
  }
  return true;
}

std::optional<double> ResolveMetric(const nlohmann::json& summary, const std::string& path, std::string* error) {
  const auto target = Follow(summary, path, false, error);
  if (!target) return std::nullopt;
  if (target->aggregate == "length") return static_cast<double>(target->node->size());
  if (target->field.empty()) return target->node->get<double>();
  return Aggregate(*target, path, error);
}

std::optional<double> Threshold(const Condition& c, const nlohmann::json* baseline, std::string* error) {
  if (c.base == Condition::Base::kNone) return c.threshold;
  if (!baseline) {
    *error = "'" + c.text + "' compares with a baseline: give --baseline SUMMARY.json";
    return std::nullopt;
  }
  const auto base = ResolveMetric(*baseline, c.path, error);
  if (!base) {
    *error = "the baseline: " + *error;
    return std::nullopt;
  }
  double threshold = *base;
  switch (c.base) {
    case Condition::Base::kPlus: threshold = *base + c.threshold; break;
    case Condition::Base::kMinus: threshold = *base - c.threshold; break;
    case Condition::Base::kTimes: threshold = *base * c.threshold; break;
    default: break;
  }
  if (!std::isfinite(threshold)) {  // a gate against inf can never fire: as a written inf, refused
    char shown[96];
    std::snprintf(shown, sizeof shown, "the threshold from the baseline (%g) is %g", *base, threshold);
    *error = "'" + c.text + "': " + shown + ", not a finite number";
    return std::nullopt;
  }
  return threshold;
}

std::vector<GateResult> EvaluateGates(const std::vector<Condition>& gates, const nlohmann::json& summary,
                                      const nlohmann::json* baseline) {
  std::vector<GateResult> results;
  for (const Condition& condition : gates) {
    GateResult result{condition, std::nullopt, std::nullopt, 0, false, ""};
    const auto threshold = Threshold(condition, baseline, &result.error);
    if (threshold) {
      result.threshold = *threshold;
      if (condition.base != Condition::Base::kNone) result.baseline = ResolveMetric(*baseline, condition.path, &result.error);
      result.value = ResolveMetric(summary, condition.path, &result.error);
    }
    result.failed = result.value && Holds(condition, *result.value, result.threshold);
    results.push_back(std::move(result));
  }
  return results;
}

// A metric's value as the tables show it: microseconds (a name with _us)
// as a duration, ratios and gains as percentages, anything else as is.
std::string MetricText(const std::string& path, double value) {
  if (path.find("_us") != std::string::npos && std::isfinite(value) && std::abs(value) < 9e15)
    return FormatDuration(static_cast<Nanos>(std::llround(value * 1000)));
  char text[64];
  if (path.find("ratio") != std::string::npos || path.ends_with(".gain"))
    std::snprintf(text, sizeof text, "%.1f%%", value * 100);
  else
    std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string GateResult::Message() const {
  if (!value) return error;
  std::string shown = condition.path + " is " + MetricText(condition.path, *value);
  if (baseline)
    return shown + " (baseline " + MetricText(condition.path, *baseline) + ", threshold " +
           MetricText(condition.path, threshold) + ")";
  return shown + " (threshold " + MetricText(condition.path, threshold) + ")";
}

std::string GatesVerdict(const std::vector<GateResult>& gates) {
  size_t failed = 0, unknown = 0;
  for (const GateResult& gate : gates) {
    failed += gate.value && gate.failed;
    unknown += !gate.value;
  }
  std::string verdict = "Gates: ";
  if (failed == 0 && unknown == 0) return verdict + "all " + std::to_string(gates.size()) + " passed";
  if (failed > 0) verdict += std::to_string(failed) + " of " + std::to_string(gates.size()) + " failed";
  if (unknown > 0) verdict += std::string(failed > 0 ? ", " : "") + std::to_string(unknown) + " could not be evaluated";
  return verdict;
}

bool Holds(const Condition& c, double value, double threshold) {
  if (c.op == ">") return value > threshold;
  if (c.op == ">=") return value >= threshold;
  if (c.op == "<") return value < threshold;
  if (c.op == "<=") return value <= threshold;
  if (c.op == "==") return value == threshold;
  return value != threshold;
}

}  // namespace jobviz
