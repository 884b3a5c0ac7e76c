// jobviz: worker logs of a pipeline-parallel training run -> Perfetto timeline.
// The first argument may name a subcommand; each has a parser that turns its
// command line into a checked plan, and a command that carries it out.
#include <cstdio>
#include <exception>
#include <string_view>

#include "cli/exit_status.h"

#include "cli/options.h"
#include "commands/commands.h"

namespace {

template <typename Plan>
int Run(const jobviz::Parsed<Plan>& parsed, int (*command)(const Plan&)) {
  return parsed.plan ? command(*parsed.plan) : parsed.exit_code;
}

int Dispatch(int argc, char** argv) {
  using namespace jobviz;
  const std::string_view subcommand = argc > 1 ? argv[1] : "";
  if (subcommand == "extract") return Run(ParseExtractCommandLine(argc - 1, argv + 1), RunExtract);
  if (subcommand == "diff") return Run(ParseDiffCommandLine(argc - 1, argv + 1), RunDiff);
  if (subcommand == "merge") return Run(ParseDrawCommandLine(argc - 1, argv + 1, /*merge=*/true), RunMerge);
  return Run(ParseDrawCommandLine(argc, argv, /*merge=*/false), RunDraw);
}

}  // namespace

int main(int argc, char** argv) {
  // The last line of defence: a bug must not leave temporary files behind
  // (unwinding removes them) or die without a word.
  try {
    return Dispatch(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "jobviz: internal error: %s\n  hint: please report it with the command line\n", e.what());
    return jobviz::kExitInternal;
  }
}
