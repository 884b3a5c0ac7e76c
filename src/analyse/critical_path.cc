#include "analyse/critical_path.h"

#include <map>
#include <utility>

namespace jobviz {

Nanos PathBreakdown::compute_total() const {
  Nanos t = 0;
  for (const Compute& c : compute) t += c.time;
  return t;
}
Nanos PathBreakdown::hand_off_total() const {
  Nanos t = 0;
  for (const HandOff& h : hand_offs) t += h.time;
  return t;
}
Nanos PathBreakdown::total() const { return compute_total() + hand_off_total() + all_reduce + stall + step_start + step_gaps; }

StepPath WalkCriticalPath(const StepGraph& g, const GraphLanes& lanes, std::int64_t step) {
  StepPath r;
  r.path.step = step;
  r.path.start = g.start;
  r.path.end = g.end;
  std::map<std::pair<int, std::uint32_t>, std::pair<Name, Nanos>> compute;
  std::map<std::pair<int, int>, Nanos> hand_offs;
  const std::vector<PathPart> parts = CriticalPath(g);
  // Kept for every step until the traces are written, and taken while the
  // other threads' step graphs are at their largest (the run's peak
  // memory): sized exactly, not by doubling.
  size_t jobs = 0, marks = 0;
  for (const PathPart& part : parts)
    if (part.kind == PathPartKind::kJob) {
      ++jobs;
      marks += g.jobs[part.job].members;
    }
  r.path.jobs.reserve(jobs);
  r.marks.reserve(marks);
  CriticalJob pending;  // the wait before a job comes before the job in time order
  for (const PathPart& part : parts) {
    const StageJob& node = g.jobs[part.job];
    const int stage = lanes.lanes[node.lane].stage;
    switch (part.kind) {
      case PathPartKind::kStepStart:
        r.step_start += part.length;
        r.path.step_start = part.length;
        break;
      case PathPartKind::kHandOff: {
        const int from = lanes.lanes[g.jobs[part.from].lane].stage;
        hand_offs[{from, stage}] += part.length;
        pending.hand_off = part.length;
        pending.from_stage = from;
        break;
      }
      case PathPartKind::kAllReduce:
        r.all_reduce += part.length;
        pending.all_reduce = part.length;
        pending.from_stage = lanes.lanes[g.jobs[part.from].lane].stage;
        break;
      case PathPartKind::kStall:
        r.stall += part.length;
        pending.stall = part.length;
        break;
      case PathPartKind::kJob: {
        auto& [type, time] = compute[{stage, node.type.index()}];
        type = node.type;
        time += part.length;
        const MemberJob& first = g.members[node.first_member];
        pending.worker = first.worker;
        pending.job = first.job;
        pending.stage = stage;
        pending.replica = lanes.lanes[node.lane].replica;
        pending.type = node.type;
        pending.micro_batch = node.micro_batch;
        pending.start = node.start;
        pending.end = node.end;
        r.path.jobs.push_back(pending);
        for (std::uint32_t k = 0; k < node.members; ++k)  // every peer's job is on the path
          r.marks.push_back(g.members[node.first_member + k]);
        pending = CriticalJob();
        break;
      }
    }
  }
  for (const auto& [key, value] : compute) r.compute.push_back({key.first, value.first.str(), value.second});
  for (const auto& [key, time] : hand_offs) r.hand_offs.push_back({key.first, key.second, time});
  return r;
}

}  // namespace jobviz
