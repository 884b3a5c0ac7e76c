// --html PATH: one self-contained page for a CI artifact: the timeline
// (canvas, src/emit/html/js/), the summary tables, the gates, and an
// "Open in Perfetto" button that hands Perfetto the embedded trace. No
// network: the page loads nothing, and its Content-Security-Policy says so.
#pragma once

#include <string>

#include "emit/emitter.h"

namespace jobviz {

// The emitter: " (HTML report[, steps A to B of the run])".
std::string EmitHtmlReport(const FinishedRun& run, const Sink& sink);

}  // namespace jobviz
