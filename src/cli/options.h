// The jobviz command line, turned into a checked plan. Flag names match the
// original script, so `jobviz --devices 0,1 --log_dir logs --multi_machine`
// works unchanged.
#pragma once

#include <optional>

#include "cli/plan.h"

namespace jobviz {

template <typename Plan>
struct Parsed {
  std::optional<Plan> plan;  // set when the command should run
  int exit_code = 0;         // otherwise exit with this (help/version: 0, errors: 2)
};

// `jobviz ...` and, with `merge`, `jobviz merge ...` (argv without "merge").
// Prints help, version or usage errors itself.
Parsed<DrawPlan> ParseDrawCommandLine(int argc, char** argv, bool merge);

// `jobviz follow ...` (argv without "follow"), or with `merge`, `jobviz
// merge --follow STREAMS...` (argv without "merge"): cli/follow_options.cc.
Parsed<FollowPlan> ParseFollowCommandLine(int argc, char** argv, bool merge = false);

// `jobviz diff BASE NEW` (argv without "diff").
Parsed<DiffPlan> ParseDiffCommandLine(int argc, char** argv);

// `jobviz history LEDGER` and, with `hosts`, `jobviz hosts LEDGER` (argv
// without the subcommand): cli/history_options.cc.
Parsed<HistoryPlan> ParseHistoryCommandLine(int argc, char** argv, bool hosts);

// `jobviz extract ...` (argv without "extract").
Parsed<ExtractPlan> ParseExtractCommandLine(int argc, char** argv);

}  // namespace jobviz
