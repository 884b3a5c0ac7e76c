#include "model/step_frontier.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace jobviz {

size_t FinishedStepCount(const Timeline& timeline, const std::set<std::string>& gone) {
  // The lowest of the workers' latest steps: every worker has moved past
  // each step below it.
  std::int64_t passed_by_all = std::numeric_limits<std::int64_t>::max();
  bool any = false;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) {
      if (gone.count(worker.file)) continue;
      std::int64_t latest = kNoStep;
      for (const Job& job : worker.jobs) latest = std::max(latest, job.step);
      if (latest == kNoStep) return 0;  // a worker with no job in a step yet: nothing is sure
      passed_by_all = std::min(passed_by_all, latest);
      any = true;
    }
  if (!any) return 0;
  size_t finished = 0;
  while (finished < timeline.steps.size() && timeline.steps[finished].step < passed_by_all &&
         !timeline.steps[finished].unfinished)
    ++finished;
  return finished;
}

}  // namespace jobviz
