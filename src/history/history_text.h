// What `jobviz history` and `jobviz hosts` print: an aligned table for a
// terminal (regressions marked), or JSON lines, one object per run or host,
// for a shell pipeline (docs/history.md).
#pragma once

#include <string>
#include <vector>

#include "history/host_ledger.h"
#include "history/run_history.h"

namespace jobviz {

std::string HistoryTable(const std::vector<HistoryLine>& lines, const HistoryOptions& options);
std::string HistoryJsonLines(const std::vector<HistoryLine>& lines);

// The first `top` hosts and GPUs (those that lost time or stopped first;
// every host when none did).
std::string HostsTable(const HostLedger& ledger, size_t top);
std::string HostsJsonLines(const HostLedger& ledger);

// "the host's", "the job's (stage 3 of nightly-7b)", or "" when never slow.
std::string SlowCauseText(const HostLine& line);

// `value` with `digits` decimals ("%.*f").
std::string FixedText(double value, int digits);

// "2026-11-28 02:00" (UTC) of unix seconds.
std::string LedgerTime(std::int64_t seconds);

}  // namespace jobviz
