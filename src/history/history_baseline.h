// --baseline-history LEDGER[:K]: the --fail-on conditions held against the
// median of the last K finished runs of the same name in the ledger, with
// the exit codes, JUnit and Markdown of --baseline (docs/history.md). The
// runs become one summary-like document that the gates read as they read
// a --baseline file.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "history/ledger_store.h"

namespace jobviz {

// "LEDGER" or "LEDGER:K" (K from 1); nullopt when K is not a number.
struct HistoryBaselineSource {
  std::string ledger;
  size_t runs = 10;
};
std::optional<HistoryBaselineSource> ParseHistoryBaseline(const std::string& text);

// The baseline of the last `k` finished runs of `runs` (oldest first): per
// key the median of those runs' values. Keys, as --summary-json names them:
// bubble_ratio, ideal_bubble_ratio, stages, micro_batches, steps (one entry
// per run: its median step, so steps.duration_us.p50 is the median of the
// runs' medians), bottleneck.measured_step_us, what_if.KEY.gain and
// .saved_us. `described`: "the median of runs #12-#21 of nightly-7b".
std::optional<nlohmann::json> BaselineOfRuns(const std::vector<LedgerRun>& runs, size_t k, std::string* described);

}  // namespace jobviz
