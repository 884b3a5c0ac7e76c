// Fuzz target: differential. The hand-written job line matcher
// (parse/job_line_matcher.h) must agree with the job pattern's RE2 on any
// bytes: both refuse, or both find the same groups; the one-pass step line
// parser must give RE2's record wherever it takes one. Built against libFuzzer
// with -Dfuzzing_engine=libfuzzer (clang); otherwise replay_main.cc runs it
// over test/fuzz/corpus/job_line/ as a regression test.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "parse/line_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  static const jobviz::LineParser parser;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // At the start, and at every keyword (most inputs worth trying hold one).
  using Agrees = bool (jobviz::LineParser::*)(std::string_view, size_t) const;
  const auto check_at_each = [&](std::string_view keyword, Agrees agrees, const char* what) {
    for (size_t at = 0; at != std::string_view::npos; at = text.find(keyword, at + 1)) {
      if (!(parser.*agrees)(text, at)) {
        std::fprintf(stderr, "%s and RE2 disagree at offset %zu\n", what, at);
        std::abort();
      }
      if (at >= text.size()) break;
    }
  };
  check_at_each("Profiler Info: Job", &jobviz::LineParser::JobMatcherAgrees, "job line matcher");
  check_at_each("NVTX range", &jobviz::LineParser::CanonicalStepAgrees, "step line parser");
  return 0;
}
