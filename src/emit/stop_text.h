// The stop report (analyse/stop_report.h) in words: the lines that open the
// report on stderr, and the verdict line and table that open the summary
// tables, Markdown and HTML (emit/summary_tables.h).
#pragma once

#include <string>
#include <vector>

#include "analyse/stop_report.h"
#include "model/model.h"

namespace jobviz {

// "jobviz: stopped: ..." lines for the report on stderr; "" when the run
// finished or nothing can be said.
std::string StopReportLines(const StopReport& report, const Timeline& timeline);

// Text of the terminal's report as the live page shows it: a block of its
// own, without "jobviz: stopped: " or "jobviz: " before every line.
std::string WithoutTerminalPrefixes(std::string text);

// The verdict's first lines: where the run stopped, and what was left out;
// none for a run that finished (a healthy run's report says nothing of stops).
std::vector<std::string> StopVerdictLines(const StopReport& report);

// The stages' places, the first to stop first (the header is the first row);
// empty when the run finished.
std::vector<std::vector<std::string>> StopRows(const StopReport& report, const Timeline& timeline);

// The stages past the table's first `listed` rows, one clause per cause:
// "Besides the first 32 rows: 473 more stages of 63 replicas wait on
// replica 37 stage 2; ..."; "" when the table has no more.
std::string FoldedStopText(const StopReport& report, size_t listed);

}  // namespace jobviz
