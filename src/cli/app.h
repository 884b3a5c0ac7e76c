// The jobviz pipeline as one call: discover -> read+parse -> model ->
// steps -> emit, with the report on stderr.
#pragma once

#include "cli/cli_options.h"

namespace jobviz {

int RunJobviz(const Options& options);

}  // namespace jobviz
