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
                       DiffFormat format, const std::vector<std::string>& configuration_changes) {
  std::string changed;  // said first: runs of another configuration differ by design
  for (const std::string& change : configuration_changes) changed += (changed.empty() ? "" : ", ") + change;
  if (format == DiffFormat::kJson) {
    nlohmann::json doc = {{"base", base_name}, {"new", new_name}, {"configuration_changes", configuration_changes},
                          {"metrics", nlohmann::json::array()}};
    for (const MetricChange& row : rows)
      doc["metrics"].push_back({{"metric", row.metric}, {"base", JsonValue(row.base)}, {"new", JsonValue(row.now)},
                                {"change", JsonValue(row.change())}, {"relative", JsonValue(row.relative())}});
    return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  std::vector<std::vector<std::string>> table = {{"metric", "base", "new", "change"}};
  for (const MetricChange& row : rows) table.push_back({row.metric, Number(row.base), Number(row.now), Change(row)});
  const std::string warning = "configuration changed: " + changed + " (the runs differ by design, not only by speed)";
  if (format == DiffFormat::kMarkdown)
    return "## jobviz diff\n\n" + (changed.empty() ? "" : "**" + MarkdownCell(warning) + "**\n\n") + "base: " +
           MarkdownCode(base_name, false) + ", new: " + MarkdownCode(new_name, false) + "\n\n" + MarkdownTable(table, {0});
  return (changed.empty() ? "" : warning + "\n") + "base: " + base_name + "\nnew:  " + new_name + "\n" + TextTable(table);
}

}  // namespace jobviz
