// `jobviz history --html FILE` and `jobviz hosts --html FILE`: one
// self-contained page each (no script, no fetch: inline SVG and CSS) that
// a CI job keeps as an artifact (docs/history.md).
#pragma once

#include <string>
#include <vector>

#include "history/host_ledger.h"
#include "history/run_history.h"

namespace jobviz {

// Step time and bubble over the runs as two charts, one series per value of
// `series` (a tag key, or "name"; "" picks the first tag key whose value
// changes among the runs shown, else the name), regressions ringed; each
// point links to its run's line in the table below, which the link lights.
std::string HistoryHtml(const std::vector<HistoryLine>& lines, const HistoryOptions& options, std::string series,
                        const std::string& ledger);

// The hosts' and GPUs' tables, the time lost drawn as a bar.
std::string HostsHtml(const HostLedger& ledger, size_t top, const std::string& path);

}  // namespace jobviz
