// Splits the records of one worker log into runs. The launcher opens
// workerlog.N in append mode, so a restarted job adds a second run after the
// first; mixing them would draw two trainings on top of each other.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"

namespace jobviz {

struct RunRange {
  size_t begin = 0, end = 0;  // indices into the records
  std::uint64_t first_line = 0;
  std::string started_by;  // why a new run was detected here ("" for the first run)
  size_t jobs = 0;         // job lines in it
  // The first job line that ended more than kRestartGap before an earlier
  // job line of the run: the clock was set back (an NTP step), 0: none.
  std::uint64_t clock_back_line = 0;
  Nanos clock_back = 0;
  // Lines that looked like a restart but were not (a banner printed again
  // while the jobs go on): "line N: why" (for -v).
  std::vector<std::string> notes;
  // libjobviz's start line of this run names another rank than the one
  // before it in the file (two ranks given one log path, one after the
  // other): both lines and ranks; 0: not so.
  std::uint64_t rank_line = 0, other_rank_line = 0;
  std::int64_t rank = -1, other_rank = -1;
};

// A new run starts at a record that a single run cannot produce after what
// came before it in the same file:
//  - a "Schedule Profiler start" line after any job or step line (the
//    Python side prints it when the job starts);
//  - the start-up banner (Paddle's "GPU Compute Capability" line, printed
//    once per process) after any job or step line, when the next job line
//    says a new process writes: another glog thread, or (without thread
//    ids) a start more than kRestartGap after the run's last job ended. A
//    child process (a data-loader worker that initialises CUDA) prints the
//    banner mid-run while the jobs go on: a note, not a new run;
//  - an NVTX push of a step number not above one already pushed (the step
//    counter went back);
//  - a clock-sync round not above one already taken (rounds only go up);
//  - a job line that starts more than kRestartGap after every earlier job of
//    the run ended AND comes from another glog thread than the job line
//    before it. Neither is trusted alone: checkpoints and evaluations pause
//    for minutes, and a thread change alone proves nothing.
//  - libjobviz's start line of another rank than the file's start line
//    before it (two ranks given one log path, writing one after the other):
//    each rank's part is a run of its own, and RunRange says so.
// A file without records has no runs.
inline constexpr Nanos kRestartGap = 5 * 60 * 1'000'000'000LL;

// Two or more processes writing one file at once (two ranks given the same
// log path): a process counts its steps or clock-sync rounds again while the
// one that counted them first goes on writing afterwards. A restart counts
// again too, but the old process never writes after it. Identified by the
// glog thread ids of the step and clock-sync lines, or (without thread ids)
// by a rank's clock-sync or topology line after another rank's when it had
// written before, or by a rank's clock-sync line after another rank's that
// gives a time before one already written (each process buffers its lines,
// so one's whole block can follow the other's: a restart comes later).
struct SharedWriters {
  std::uint64_t line = 0;               // the line that counted again; 0: one writer
  std::vector<std::uint32_t> threads;   // the glog threads seen writing steps or rounds (the first few)
  std::vector<std::int64_t> ranks;      // ranks named by clock-sync and topology lines (the first few)
};
SharedWriters FindSharedWriters(const std::vector<LogRecord>& records);

// With `shared_writers`, nothing splits a run: a step pushed again, a round
// taken again, a profiler start line or a banner after jobs, a glog thread
// change are all the other writer, not a restart.
std::vector<RunRange> SplitRuns(const std::vector<LogRecord>& records, bool shared_writers = false);

// Which of the runs appended to a workerlog to show: 1-based, or all.
struct RunChoice {
  enum class Kind { kLast, kAll, kNumber } kind = Kind::kLast;
  int number = 0;
};

struct RunSummary {
  std::string file;
  std::vector<RunRange> runs;
};

// Whether run `r` (0-based) of `runs` is drawn.
bool Drawn(const RunChoice& choice, size_t r, size_t runs);
// The job lines of the runs `choice` leaves out.
size_t JobsNotDrawn(const std::vector<RunRange>& runs, const RunChoice& choice);

// "12.5 min": how the restart and clock messages give a gap.
std::string Minutes(Nanos gap);

}  // namespace jobviz
