// The analysis as a document: JSON (--summary-json, schema in
// docs/analysis.md) and aligned tables for a terminal (--summary).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "analyse/analysis.h"

namespace jobviz {

struct RunCounts {
  std::uint64_t files = 0, lines = 0, jobs = 0, skipped = 0;
};

nlohmann::json SummaryJson(const Analysis& analysis, const Timeline& timeline, const RunCounts& counts);
std::string SummaryTables(const Analysis& analysis);

}  // namespace jobviz
