#include "analyse/fail_on.h"

#include "analyse/analysis.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

namespace jobviz {

std::optional<Condition> ParseCondition(const std::string& text, std::string* error) {
  static const char* kOps[] = {">=", "<=", "==", "!=", ">", "<"};
  for (const char* op : kOps) {
    const size_t at = text.find(op);
    if (at == std::string::npos) continue;
    Condition c{text, text.substr(0, at), op, 0};
    std::string value = text.substr(at + std::string(op).size());
    auto trim = [](std::string& s) {
      s.erase(0, s.find_first_not_of(' '));
      s.erase(s.find_last_not_of(' ') + 1);
    };
    trim(c.path);
    trim(value);
    char* end = nullptr;
    c.threshold = std::strtod(value.c_str(), &end);
    if (c.path.empty() || value.empty() || *end != '\0') break;
    return c;
  }
  *error = "'" + text + "': expected METRIC OP NUMBER, e.g. bubble_ratio>0.35 (OP: > >= < <= == !=)";
  return std::nullopt;
}

std::optional<double> ResolveMetric(const nlohmann::json& summary, const std::string& path, std::string* error) {
  std::vector<std::string> parts;
  std::stringstream in(path);
  for (std::string part; std::getline(in, part, '.');) parts.push_back(part);
  const nlohmann::json* node = &summary;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (node->is_object()) {
      const auto it = node->find(parts[i]);
      if (it == node->end()) {
        *error = "'" + path + "': no '" + parts[i] + "' in the summary";
        return std::nullopt;
      }
      node = &*it;
      continue;
    }
    if (node->is_array()) {
      // array.field.aggregate
      if (i + 2 != parts.size()) {
        *error = "'" + path + "': after an array give a field and an aggregate, e.g. steps.duration_us.p95";
        return std::nullopt;
      }
      std::vector<double> values;
      for (const auto& item : *node)
        if (item.is_object() && item.contains(parts[i]) && item[parts[i]].is_number())
          values.push_back(item[parts[i]].get<double>());
      const std::string& agg = parts[i + 1];
      if (agg == "count") return static_cast<double>(values.size());
      if (values.empty()) {
        *error = "'" + path + "': no values of '" + parts[i] + "'";
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
      if (agg == "p99") return Percentile(values, 99);
      *error = "'" + path + "': unknown aggregate '" + agg + "' (min, max, mean, sum, count, p50, p95, p99)";
      return std::nullopt;
    }
    *error = "'" + path + "': '" + parts[i - 1] + "' is a value, not an object";
    return std::nullopt;
  }
  if (!node->is_number()) {
    *error = "'" + path + "' is not a number in the summary";
    return std::nullopt;
  }
  return node->get<double>();
}

bool Holds(const Condition& c, double value) {
  if (c.op == ">") return value > c.threshold;
  if (c.op == ">=") return value >= c.threshold;
  if (c.op == "<") return value < c.threshold;
  if (c.op == "<=") return value <= c.threshold;
  if (c.op == "==") return value == c.threshold;
  return value != c.threshold;
}

}  // namespace jobviz
