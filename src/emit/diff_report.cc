#include "emit/diff_report.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "emit/summary_tables.h"

namespace jobviz {

namespace {

std::string Number(const std::optional<double>& value) {
  if (!value) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", *value);
  return text;
}

std::string Change(const MetricChange& row) {
  const auto change = row.change();
  if (!change) return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%+.6g", *change);
  std::string out = text;
  if (const auto relative = row.relative()) {
    std::snprintf(text, sizeof text, " (%+.1f%%)", *relative * 100);
    out += text;
  }
  return out;
}

nlohmann::json JsonValue(const std::optional<double>& value) { return value ? nlohmann::json(*value) : nlohmann::json(); }

}  // namespace

std::string DiffReport(const std::vector<MetricChange>& rows, const std::string& base_name, const std::string& new_name,
                       DiffFormat format) {
  if (format == DiffFormat::kJson) {
    nlohmann::json doc = {{"base", base_name}, {"new", new_name}, {"metrics", nlohmann::json::array()}};
    for (const MetricChange& row : rows)
      doc["metrics"].push_back({{"metric", row.metric}, {"base", JsonValue(row.base)}, {"new", JsonValue(row.now)},
                                {"change", JsonValue(row.change())}, {"relative", JsonValue(row.relative())}});
    return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  std::vector<std::vector<std::string>> table = {{"metric", "base", "new", "change"}};
  for (const MetricChange& row : rows) table.push_back({row.metric, Number(row.base), Number(row.now), Change(row)});
  if (format == DiffFormat::kMarkdown)
    return "## jobviz diff\n\nbase: " + MarkdownCode(base_name, false) + ", new: " + MarkdownCode(new_name, false) +
           "\n\n" + MarkdownTable(table, {0});
  return "base: " + base_name + "\nnew:  " + new_name + "\n" + TextTable(table);
}

}  // namespace jobviz
