// --summary-md: the summary as GitHub-flavoured Markdown tables, for
// $GITHUB_STEP_SUMMARY or a merge-request comment.
#pragma once

#include <string>

#include "emit/emitter.h"

namespace jobviz {

std::string EmitSummaryMarkdown(const FinishedRun& run, const Sink& sink);

}  // namespace jobviz
