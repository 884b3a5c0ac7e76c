#include "emit/summary_json.h"

namespace jobviz {

std::string EmitSummaryJson(const FinishedRun& run, const Sink& sink) {
  // Names come from directory and file names, which need not be UTF-8:
  // such bytes become U+FFFD rather than an exception.
  sink(run.summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  return "";
}

}  // namespace jobviz
