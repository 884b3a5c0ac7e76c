// The analysis as a document: what --summary-json writes and what --fail-on
// conditions name (schema in docs/analysis.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "analyse/analysis.h"

namespace jobviz {

struct RunCounts {
  std::uint64_t files = 0, lines = 0, jobs = 0, skipped = 0;
};

nlohmann::json SummaryJson(const Analysis& analysis, const Timeline& timeline, const RunCounts& counts);

// The document's shape, made by SummaryJson itself from an analysis with one
// element in every array. Keys that depend on the logs (the job types) are
// the wildcard kAnyKey. Lets --fail-on names be checked before any log is
// read.
inline constexpr const char* kAnyKey = "*";
const nlohmann::json& SummarySchema();

}  // namespace jobviz
