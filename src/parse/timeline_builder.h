// Puts the scanned logs together into one timeline: picks the run to show in
// each file and turns its records into per-worker jobs and markers.
#pragma once

#include <string>
#include <vector>

#include "read/log_discovery.h"
#include "model/model.h"
#include "model/run_splitter.h"
#include "parse/workerlog_scan.h"

namespace jobviz {

// How the warning of a clock set back ends (a jump the clock stage finds
// and undoes changes it: commands/stages.h AlignRunClocks).
inline constexpr const char* kDrawnAsLogged = "; times are drawn as logged, each job in its step";

struct BuildResult {
  Timeline timeline;
  std::vector<RunSummary> runs;  // per file, in file order
  std::vector<std::string> warnings;
  std::string error;  // set when the chosen run does not exist
};

// One file's part: its runs, and the worker of the chosen run. Takes the
// file's records (their strings move into the jobs, the rest is freed), so
// it can run as soon as the file is scanned and the records of all files
// never pile up.
struct FileBuild {
  Worker worker;
  std::vector<RunRange> runs;
  std::string error;  // set when the chosen run does not exist in this file
  // In a drawn run, the first job line whose clock was set back (RunRange), 0: none.
  std::uint64_t clock_back_line = 0;
  Nanos clock_back = 0;
  SharedWriters shared;  // line != 0: several processes wrote this file at once
};
FileBuild BuildFile(const WorkerLogFile& file, WorkerLogScan& scan, const RunChoice& choice);

// The timeline from every file's part, in the order of `logs.files`.
BuildResult AssembleTimeline(const LogSet& logs, std::vector<FileBuild> files);

// Both steps at once.
BuildResult BuildTimeline(const LogSet& logs, std::vector<WorkerLogScan>& scans, const RunChoice& choice);

}  // namespace jobviz
