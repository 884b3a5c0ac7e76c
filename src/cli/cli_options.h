// The jobviz command line. Flag names match the original script, so
// `jobviz --devices 0,1 --log_dir logs --multi_machine` works unchanged.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "align/clock_align.h"
#include "model/timeline_builder.h"

namespace jobviz {

struct Options {
  enum class Mode { kDraw, kExtract, kMerge } mode = Mode::kDraw;
  std::string machine;  // extract: the machine's name in the merged trace
  std::string log_dir;
  std::vector<std::string> files;  // explicit inputs instead of --log_dir; merge: events files
  bool multi_machine = false;
  std::vector<int> devices;  // sorted, unique; empty = every workerlog found
  RunChoice run;
  std::string output;         // Perfetto trace; default LOG_DIR/pipeline_profile_perfetto.json
  std::string chrome_output;  // legacy trace; default LOG_DIR/pipeline_profile.json
  bool no_chrome = false;
  int verbosity = 1;  // 0 quiet, 1 normal, 2 verbose
  int threads = 0;    // 0 = one per core
  AlignMode clock_align = AlignMode::kAuto;
  std::map<std::string, Nanos> clock_offsets;  // --clock_offset, by machine name
  std::string clock_ref;                       // "" = the first machine
  std::string stage_order;                     // "" = global rank order
  int summary = -1;                 // -1: when stdout is a terminal; 0 off; 1 on
  std::string summary_json;         // "" none, "-" stdout, else a path
  std::vector<std::string> fail_on; // conditions, checked with ParseCondition
};

struct ParseOutcome {
  std::optional<Options> options;  // set when jobviz should run
  int exit_code = 0;               // otherwise exit with this (help/version: 0, errors: 2)
};

// Parses argv; prints help, version or usage errors itself.
ParseOutcome ParseCommandLine(int argc, char** argv);

// "machine1=+2.5ms,machine2=-300us": units ns, us, ms (default) or s.
std::optional<std::map<std::string, Nanos>> ParseClockOffsets(const std::string& text, std::string* error);

// "last", "all" or a 1-based number.
std::optional<RunChoice> ParseRunChoice(const std::string& text);

}  // namespace jobviz
