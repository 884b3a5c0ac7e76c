// The summary's workers (--summary-json's "workers"): every worker listed
// with its busy and idle time, bubble, speed and steps, up to
// kListedWorkers of them. Past that a run has more workers than anyone
// reads one by one (131,072 GPUs: 61 MB of the document), so they are
// folded: "workers" keeps the ones worth naming (the slow workers, the
// lagging peers, each stage's most and least idle) and "workers_folded"
// gives every stage's and every replica's spread (min, median, max).
// Schema in docs/analysis.md, "The summary at scale".
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

#include "analyse/analysis.h"

namespace jobviz {

// --summary-workers: list every worker up to kListedWorkers (auto), always
// (all), or never (folded).
enum class WorkerListing { kAuto, kAll, kFolded };
inline constexpr size_t kListedWorkers = 4096;

bool FoldsWorkers(WorkerListing listing, size_t workers);

// doc["workers"], and doc["workers_folded"] when they are folded.
void AddSummaryWorkers(const Analysis& analysis, WorkerListing listing, nlohmann::json& doc);

// How many workers a summary is of, listed or folded (0: none said).
size_t SummaryWorkerCount(const nlohmann::json& summary);
// Whether its workers are folded: then "workers" lists only some of them.
bool SummaryFoldsWorkers(const nlohmann::json& summary);

}  // namespace jobviz
