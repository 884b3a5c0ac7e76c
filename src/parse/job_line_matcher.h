// The job line by hand. Nearly every record a scan keeps is a job line, and
// RE2 took about 0.6 us for each (a fifth of a whole run's CPU time on the
// benchmark). The job pattern (line_formats.cc) is deterministic: every
// group ends at a byte the group cannot hold, so one left-to-right pass
// finds the same groups RE2 does. LineParser tries this first and falls back
// to RE2 whenever it does not match (RE2 also explains what is wrong); the
// parser checks its sample lines with both at load, and the job_line fuzz
// target compares the two on any bytes.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

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

}  // namespace jobviz
