// The report of a run on stderr, built in one place from the finished run:
// what was read, the runs, jobs per worker, clocks, steps, what was skipped
// and the warnings; with -v also per-file lines and timing.
#pragma once

#include <string>

#include "emit/emitter.h"

namespace jobviz {

// Everything before the outputs are written. At -q only the skip report.
std::string RunReport(const FinishedRun& run, int verbosity);

// -v: "jobviz: time: ..." with read speed, total time and peak memory.
std::string TimingLine(const FinishedRun& run, double total_seconds);

std::string Plural(std::uint64_t n, const char* one, const char* many);

}  // namespace jobviz
