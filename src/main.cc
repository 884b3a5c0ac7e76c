// jobviz: worker logs of a pipeline-parallel training run -> Perfetto timeline.
#include "cli/app.h"
#include "cli/cli_options.h"

int main(int argc, char** argv) {
  const jobviz::ParseOutcome parsed = jobviz::ParseCommandLine(argc, argv);
  if (!parsed.options) return parsed.exit_code;
  return jobviz::RunJobviz(*parsed.options);
}
