// The job line (and a step's NVTX line) by hand. Nearly every record a scan
// keeps is a job line, and RE2 took about 0.6 us for each (a fifth of a
// whole run's CPU time on the benchmark). The job pattern (line_formats.cc)
// is deterministic: every group ends at a byte the group cannot hold, so
// one left-to-right pass finds the same groups RE2 does. LineParser tries
// this first and falls back to RE2 whenever it does not match (RE2 also
// explains what is wrong); the parser checks its sample lines with both at
// load, and the job_line fuzz target compares the two on any bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model/time_value.h"

namespace jobviz {

struct JobLineMatch {
  std::string_view whole;  // from the keyword to the end of the last group
  std::string_view id, type, micro_batch, start, end;
  // In the pattern's order, as RE2 numbers them (0: the whole match).
  std::array<std::string_view, 6> groups() const { return {whole, id, type, micro_batch, start, end}; }
};

// Matches, anchored at `position`, what RE2 matches for
//   Profiler Info: Job\s*\(\s*([^()\s]+)\s*\),\s*type\s*=\s*(\w+)
//   ,\s*micro_batch_id\s*=\s*(\d+),\s*job_start_time\s*=\s*(\d+(?:\.\d*)?)
//   ,\s*job_end_time\s*=\s*(\d+(?:\.\d*)?)
// in Latin-1 (\s: tab, newline, form feed, carriage return, space; \w:
// ASCII letters, digits and '_'). False when it does not match.
bool MatchJobLine(std::string_view text, size_t position, JobLineMatch* match);

// A job line exactly as Paddle and libjobviz print it, numbers and all, in
// one pass over its bytes: in job-dense logs the job lines are half of all
// lines, and matching first, then reading each number's digits again, then
// checking the whole line for colour escapes cost ~4x the bytes' one touch.
struct CanonicalJob {
  std::string_view id, type;
  std::int64_t micro_batch = 0;
  ParsedMillis start, end;
  size_t record_end = 0;  // offset in the text just past the end time
};

// Parses, anchored at `position`,
//   Profiler Info: Job (ID), type = WORD, micro_batch_id = N, job_start_time = MS, job_end_time = MS
// with single spaces as printed, ID of ASCII letters, digits and "_-.:",
// N of at most 18 digits and MS of at most 13 whole digits. Anything else
// (other spacing, other bytes, longer numbers) returns false and is left to
// MatchJobLine and RE2, which give the same fields for every line this
// accepts (LineParser::JobMatcherAgrees checks both; so does the fuzz target).
bool ParseCanonicalJobLine(std::string_view text, size_t position, CanonicalJob* job);

// A step's NVTX line as Paddle prints it, the same way: one a step each,
// but RE2 took a tenth of a job-dense log's parse for them.
struct CanonicalStep {
  bool push = false;      // "push: N" (a step); else "pop"
  std::int64_t step = 0;  // pushed; 0 for a pop
  ParsedMillis time;
  size_t record_end = 0;  // offset in the text just past the time
};

// Parses, anchored at `position`,
//   NVTX range push: N, time: MS    or    NVTX range pop, time: MS
// with single spaces as printed, N of 1 to 12 digits (a step number below
// kRunStride) and MS as in a job line. Anything else returns false and is
// left to RE2, which gives the same record for every line this accepts
// (LineParser::CanonicalStepAgrees; the job_line fuzz target checks it).
bool ParseCanonicalStepLine(std::string_view text, size_t position, CanonicalStep* step);

}  // namespace jobviz
