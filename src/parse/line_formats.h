// The worker-log lines jobviz understands, described as data: the keyword
// that marks each line, the fields that follow it (each a regular
// expression piece with a human-readable form for error messages), and
// sample lines that must parse. The full pattern of a format is the
// concatenation of its pieces, so the fast match and the diagnostics that
// say which field is wrong cannot drift apart. See docs/workerlog-format.md.
#pragma once

#include <string_view>
#include <vector>

namespace jobviz {

// kInFlight shares kJob's keyword (the scanner looks for it once): a job
// line's text that is not a finished job is tried as an in-flight one.
enum class LineKind { kJob, kProfilerWindow, kNvtx, kClockSync, kStartBanner, kHybridInfo, kProfilerHeader, kInFlight };

struct FieldPattern {
  std::string_view expected;  // what a user should see, e.g. ", type = <word>"
  std::string_view regex;     // RE2 syntax; capture groups hold the values
};

struct LineFormat {
  LineKind kind;
  std::string_view name;     // "job line"
  std::string_view keyword;  // literal text the line's record starts with
  std::vector<FieldPattern> fields;
  std::vector<std::string_view> samples;  // checked when the parser is built
};

// In the order of LineKind.
const std::vector<LineFormat>& LineFormats();

}  // namespace jobviz
