// The analysis as a document: what --summary-json writes and what --fail-on
// conditions name (schema in docs/analysis.md).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "analyse/analysis.h"
#include "analyse/summary_workers.h"

namespace jobviz {

struct RunCounts {
  std::uint64_t files = 0, lines = 0, jobs = 0, skipped = 0;
};

nlohmann::json SummaryJson(const Analysis& analysis, const Timeline& timeline, const RunCounts& counts,
                           WorkerListing listing = WorkerListing::kAuto);

// The document's shape, made by SummaryJson itself from an analysis with one
// element in every array. Keys that depend on the logs (the job types) are
// the wildcard kAnyKey. Lets --fail-on names be checked before any log is
// read.
inline constexpr const char* kAnyKey = "*";
const nlohmann::json& SummarySchema();

// A --summary-json file read back (--baseline, jobviz diff): the document,
// or nullopt with `error` saying "cannot read it" or "not a summary JSON".
std::optional<nlohmann::json> ReadSummaryFile(const std::string& path, std::string* error);

}  // namespace jobviz
