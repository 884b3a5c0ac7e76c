// Turns one worker-log line that holds a keyword into a typed record.
// Lines are given as (line text, keyword position) so tests feed strings and
// the reader passes slices of its block without copying.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "parse/keyword_scanner.h"
#include "parse/line_formats.h"
#include "model/time_value.h"
#include "model/topology.h"

namespace jobviz {

struct ParsedLine {
  enum class Kind {
    kJob, kProfilerWindow, kStepPush, kRangePush, kStepPop, kClockSync, kStartBanner, kHybridInfo, kShimTopology,
    kProfilerHeader, kInFlight, kMalformed
  };
  Kind kind = Kind::kMalformed;
  LineKind format = LineKind::kJob;

  // kJob. Views into the parsed text (the line, or the scratch copy the
  // parser made to strip colour escapes).
  std::string_view job_id, type;  // kRangePush: the range's name in `type`
  std::int64_t micro_batch = 0;
  ParsedMillis start, end;
  // kInFlight: job_id, type, micro_batch, `start` (its start, or when it was
  // enqueued), `waited` (ns) and whether it had begun.
  Nanos waited = 0;
  bool started = true;
  bool log_shared = false;  // kProfilerHeader: the line says another live profiler holds the log
  std::string_view host;    // kProfilerHeader: the host it names ("" when none)

  // kProfilerWindow: end_step is -1 when the line has none.
  // kStepPush: step. kClockSync: rank, round.
  std::int64_t start_step = 0, end_step = -1, step = 0, rank = 0, round = 0;
  ParsedMillis time;  // kStepPush, kStepPop, kClockSync
  // kHybridInfo, kShimTopology (the same line with coordinates, as libjobviz
  // writes it): `rank` and where it sits.
  ParallelPlace place;

  // Offset just past the record in the text it was parsed from; the reader
  // keeps scanning there, so two records run together on one line both count.
  size_t record_end = 0;
  // Where a second record could start in the original line.
  size_t resume_at = 0;

  // kMalformed: where parsing stopped (column in the original line, 0-based)
  // and what was expected there.
  size_t error_column = 0;
  std::string_view expected;
  // Or, where a format's own check refused the fields, why (told instead).
  std::string reason;
};

class LineParser {
 public:
  LineParser();  // compiles the patterns once and checks every sample line
  ~LineParser();
  LineParser(const LineParser&) = delete;
  LineParser& operator=(const LineParser&) = delete;

  // The scanner that finds this parser's keywords; keyword k is LineFormats()[k].
  const KeywordScanner& scanner() const { return scanner_; }

  // Parses the record that begins at `keyword_pos` in `line` (keyword index
  // from the scanner). `scratch` is reused to strip ANSI colour escapes.
  ParsedLine Parse(std::string_view line, size_t keyword_pos, int keyword,
                   std::string* scratch) const;

  // Convenience for tests: finds the first keyword in `line` and parses it.
  // Returns kMalformed with expected "a known keyword" when there is none.
  ParsedLine ParseFirst(std::string_view line, std::string* scratch) const;

  // True when the hand-written job line matcher (job_line_matcher.h) and the
  // job pattern's RE2 agree on the text at `position`: both fail, or both
  // match with the same groups; and CanonicalAgrees. Checked on the samples
  // at load and by the job_line fuzz target on any bytes.
  bool JobMatcherAgrees(std::string_view text, size_t position) const;
  // True unless the one-pass canonical job line parser (job_line_matcher.h)
  // accepts the record at `position` and Parse, given the line the scanner
  // would give it, finds other fields or refuses it.
  bool CanonicalAgrees(std::string_view text, size_t position) const;
  // The same for a step's NVTX line (ParseCanonicalStepLine).
  bool CanonicalStepAgrees(std::string_view text, size_t position) const;

 private:
  struct Compiled;
  ParsedLine ParseClean(std::string_view text, size_t keyword_pos, int keyword) const;
  ParsedLine Diagnose(std::string_view text, size_t keyword_pos, int keyword) const;
  // What Parse gives a one-pass parser's line (to `record_end`); nullopt where the scanner would not.
  std::optional<ParsedLine> ParseAsTaken(std::string_view text, size_t at, size_t record_end, LineKind kind) const;

  KeywordScanner scanner_;
  std::unique_ptr<Compiled> compiled_;
};

// Removes ANSI CSI escape sequences ("\x1b[1;32m") from `line` into `out`;
// `position` (an offset into `line`) is mapped to the same byte in `out`.
void StripAnsiEscapes(std::string_view line, std::string* out, size_t* position);

}  // namespace jobviz
