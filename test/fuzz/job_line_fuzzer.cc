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
  for (size_t at = 0; at != std::string_view::npos; at = text.find("Profiler Info: Job", at + 1)) {
    if (!parser.JobMatcherAgrees(text, at)) {
      std::fprintf(stderr, "job line matcher and RE2 disagree at offset %zu\n", at);
      std::abort();
    }
    if (at >= text.size()) break;
  }
  // And the step lines' one-pass parser against RE2's fields.
  for (size_t at = 0; at != std::string_view::npos; at = text.find("NVTX range", at + 1)) {
    if (!parser.CanonicalStepAgrees(text, at)) {
      std::fprintf(stderr, "step line parser and RE2 disagree at offset %zu\n", at);
      std::abort();
    }
    if (at >= text.size()) break;
  }
  return 0;
}
