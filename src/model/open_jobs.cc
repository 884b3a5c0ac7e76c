#include "model/open_jobs.h"

#include <algorithm>

namespace jobviz {

bool OpenAfter(const InFlightJob& job, Nanos last_end) {
  return job.start >= last_end || job.seen > last_end + (job.seen - job.start) / 2;
}

std::vector<OpenSlice> OpenSlices(const Worker& worker) {
  std::vector<OpenSlice> slices;
  if (worker.in_flight.empty()) return slices;
  Nanos busy_until = LastJobEnd(worker);
  std::vector<const InFlightJob*> order;
  for (const InFlightJob& job : worker.in_flight) order.push_back(&job);
  std::stable_sort(order.begin(), order.end(), [](const InFlightJob* a, const InFlightJob* b) { return a->start < b->start; });
  for (const InFlightJob* job : order) {
    if (job->start < busy_until) continue;
    const Nanos end = std::max(job->seen, worker.end.stamped);
    slices.push_back({job, job->start, end});
    busy_until = end;
  }
  return slices;
}

std::string OpenSliceName(const InFlightJob& job) {
  return job.type.str() + " " + std::to_string(job.micro_batch) + " (never ended)";
}

const char* OpenSliceNote(const InFlightJob& job) {
  return job.started ? "began, never ended: still running when its log ends"
                     : "enqueued, never began: its stream was blocked";
}

}  // namespace jobviz
