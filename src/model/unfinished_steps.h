// Which steps the run did not finish: a step in which some worker's jobs
// stop short of what its other steps (or, for forward and backward passes,
// the other workers in the same step) hold, when that worker's log holds
// nothing after it; or a step after a worker's last one that other workers
// reached. Every step from the first such one on is unfinished: the
// pipeline and the gradients' all-reduce tie every worker to the one that
// stopped, so nothing after it is a step as the schedule runs it.
// A job a watchdog line shows begun and never ended stops its worker short
// too, and so is a step whose micro-batches went forward and not all
// backward. A lone step with no closing job (optimizer) on any worker, all
// passes run, is unfinished when a few logs went silent well before the
// rest: the others blocked in the all-reduce before the optimizer. Logs
// that end together leave it whole: a run that prints no optimizer line
// looks the same.
// A profiling window's end (every worker's last step whole) and a
// --devices subset (the workers read each whole) are no stop.
#pragma once

#include <cstdint>
#include <vector>

#include "model/model.h"
#include "model/open_jobs.h"

namespace jobviz {

// Where one worker stopped: the first step it did not finish (kNoStep:
// it finished every step of its run), and how many of that step's jobs it
// holds against how many its finished steps held.
struct WorkerStop {
  std::int64_t step = kNoStep;
  size_t jobs = 0, expected = 0;
};

struct UnfinishedSteps {
  std::vector<WorkerStop> workers;  // AllWorkers order
  // Each worker's LastJobEnd, in the same order: taken in the pass that
  // counts its steps, while its jobs are in that core's cache (the stop
  // report reads it for every worker; on its own, one thread, it was the
  // slowest pass over the jobs of the steps stage).
  std::vector<Nanos> last_job_ends;
  std::int64_t first = kNoStep;     // the first unfinished step of the last run that has one
  size_t steps = 0, jobs = 0;       // unfinished steps, and the jobs they hold
};

// Sets StepSpan::unfinished on the timeline's steps (Job::step must be set).
// Workers are counted on up to `threads` threads (0: one per core).
UnfinishedSteps MarkUnfinishedSteps(Timeline* timeline, int threads = 1);

// Whether a job's step is one the run did not finish.
class UnfinishedStepSet {
 public:
  explicit UnfinishedStepSet(const Timeline& timeline);
  bool Contains(std::int64_t step) const;
  bool empty() const { return steps_.empty(); }

 private:
  std::vector<std::int64_t> steps_;  // sorted
};

}  // namespace jobviz
