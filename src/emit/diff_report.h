// `jobviz diff` output: the metrics of two runs as an aligned table for a
// terminal, as JSON, or as a GitHub-flavoured Markdown table.
#pragma once

#include <string>
#include <vector>

#include "analyse/summary_diff.h"

namespace jobviz {

enum class DiffFormat { kTable, kJson, kMarkdown };

// `configuration_changes` (ConfigurationChanges) are said first.
std::string DiffReport(const std::vector<MetricChange>& rows, const std::string& base_name,
                       const std::string& new_name, DiffFormat format,
                       const std::vector<std::string>& configuration_changes = {},
                       const std::vector<std::string>& stops = {});

}  // namespace jobviz
