// Fuzz target: any bytes as a command line (arguments split at NUL bytes) and
// as the values of the options with grammars of their own.
#include <cstdint>
#include <string>
#include <vector>

#include "analyse/fail_on.h"
#include "analyse/summary.h"
#include "cli/option_values.h"
#include "cli/options.h"
#include "fuzz_pipeline.h"
#include "model/step_window.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  using namespace jobviz;
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::string error;
  (void)ParseRunChoice(input);
  (void)ParseClockOffsets(input, &error);
  (void)ParseStageOrder(input, &error);
  (void)ParseStepRange(input, &error);
  if (const auto condition = ParseCondition(input, &error)) {
    fuzz::Require(condition->threshold == condition->threshold, "no nan thresholds");
    (void)CheckMetricPath(SummarySchema(), condition->path, &error);
  }
  std::vector<std::string> args = {"jobviz"};
  for (size_t begin = 0; begin <= input.size() && args.size() < 32;) {
    const size_t end = std::min(input.find('\0', begin), input.size());
    args.push_back(input.substr(begin, end - begin));
    begin = end + 1;
  }
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  // Help and version print and return; errors print and return 2.
  const auto draw = ParseDrawCommandLine(static_cast<int>(argv.size()), argv.data(), /*merge=*/false);
  if (draw.plan) fuzz::Require(!draw.plan->outputs.empty(), "a plan writes something");
  else fuzz::Require(draw.exit_code == 0 || draw.exit_code == 2, "usage errors exit 2");
  const auto extract = ParseExtractCommandLine(static_cast<int>(argv.size()), argv.data());
  if (!extract.plan) fuzz::Require(extract.exit_code == 0 || extract.exit_code == 2, "usage errors exit 2");
  const auto follow = ParseFollowCommandLine(static_cast<int>(argv.size()), argv.data());
  if (follow.plan) {
    fuzz::Require(follow.plan->poll_seconds > 0 && follow.plan->refresh_seconds > 0, "follow's intervals are positive");
    for (const OutputRequest& output : follow.plan->draw.outputs)
      fuzz::Require(output.path != "-", "follow keeps stdout for its steps");
  } else {
    fuzz::Require(follow.exit_code == 0 || follow.exit_code == 2, "usage errors exit 2");
  }
  return 0;
}
