#include "analyse/stop_groups.h"

#include <algorithm>

#include "analyse/schedule.h"

namespace jobviz::stop {

bool PassesDone(const Context& c, int lane, std::int64_t step, Nanos* at) {
  const LaneStop& l = c.report.lanes[lane];
  const Position& p = c.positions[l.workers.front()];
  if (p.step == kNoStep || p.step > step) {
    *at = 0;
    return true;
  }
  if (p.step < step) return false;
  if (p.plan.empty()) {  // a first step: all of 1F1B's 2m passes, when that is what it runs
    const size_t passes = static_cast<size_t>(std::count_if(p.done.begin(), p.done.end(), [](const Job* j) { return IsPass(j->type); }));
    if (c.micro_batches == 0 || passes < 2 * static_cast<size_t>(c.micro_batches)) return false;
    *at = p.done.empty() ? 0 : p.done.back()->end;
    return true;
  }
  size_t last_pass = 0;
  for (size_t k = 0; k < p.plan.size(); ++k)
    if (IsPass(p.plan[k]->type)) last_pass = k + 1;
  if (p.done.size() < last_pass) return false;
  *at = last_pass > 0 ? p.done[last_pass - 1]->end : 0;
  return true;
}

bool ClosedStep(const Context& c, int lane, std::int64_t step) {
  const Position& p = c.positions[c.report.lanes[lane].workers.front()];
  if (p.step == kNoStep || p.step > step) return true;
  if (p.step < step) return false;
  bool pass_seen = false;
  for (const Job* job : p.done) {
    if (IsPass(job->type)) pass_seen = true;
    else if (pass_seen) return true;
  }
  return false;
}

bool SomeStageClosed(const Context& c) {
  for (size_t l = 0; l < c.report.lanes.size(); ++l)
    if (!c.report.lanes[l].workers.empty() && ClosedStep(c, static_cast<int>(l), c.report.step)) return true;
  return false;
}

// (Machines' clocks can hide that optimizers start together.)
bool EveryStageAtClosing(const Context& c) {
  size_t lanes = 0;
  for (size_t l = 0; l < c.report.lanes.size(); ++l) {
    if (c.report.lanes[l].workers.empty()) continue;
    Nanos at = 0;
    const Position& p = c.positions[c.report.lanes[l].workers.front()];
    if (p.step != c.report.step || !PassesDone(c, static_cast<int>(l), c.report.step, &at) ||
        ClosedStep(c, static_cast<int>(l), c.report.step))
      return false;
    ++lanes;
  }
  return lanes >= 2;
}

const GroupPasses& GroupOf(Context& c, size_t l, std::int64_t step) {
  const StageLane& lane = c.graph.lanes[l];
  const int key = c.report.all_reduce_global ? -1 : lane.stage;
  auto [it, inserted] = c.groups.try_emplace({key, step});
  if (!inserted) return it->second;
  GroupPasses& g = it->second;
  for (size_t o = 0; o < c.graph.lanes.size(); ++o) {
    if (key >= 0 && c.graph.lanes[o].stage != key) continue;
    if (c.report.lanes[o].workers.empty()) continue;
    ++g.members;
    g.closed = g.closed || ClosedStep(c, static_cast<int>(o), step);
    Nanos at = 0;
    if (!PassesDone(c, static_cast<int>(o), step, &at)) {
      if (g.not_done[0] < 0) g.not_done[0] = static_cast<int>(o);
      else if (g.not_done[1] < 0) g.not_done[1] = static_cast<int>(o);
    } else {
      g.latest = std::max(g.latest, at);
    }
  }
  return g;
}

}  // namespace jobviz::stop
