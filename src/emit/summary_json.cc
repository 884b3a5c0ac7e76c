#include "emit/summary_json.h"

namespace jobviz {

std::string EmitSummaryJson(const FinishedRun& run, const Sink& sink) {
  sink(run.summary.dump(2) + "\n");
  return "";
}

}  // namespace jobviz
