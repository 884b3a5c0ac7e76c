#include "align/replica_ties.h"

#include <algorithm>
#include <map>

#include "model/time_value.h"

namespace jobviz {

namespace {

bool IsPassType(const std::string& type) { return type.rfind("forward", 0) == 0 || type.rfind("backward", 0) == 0; }

// One worker's step boundary: its last pass's end and the start of its
// first job after its passes (the optimizer), on its set's clock.
struct Boundary {
  int set = 0;
  Nanos last_pass = kLowest, after = kNever;
};

// By (stage, k): each worker's k-th step boundary. Counted along the jobs,
// not by Job::step: clocks are aligned before steps are found, and every
// replica's workers run the same steps in the same order.
std::map<std::pair<int, size_t>, std::vector<Boundary>> Boundaries(const Timeline& timeline, const std::vector<int>& component,
                                                                  const std::vector<MachineClock>& clocks) {
  std::map<std::pair<int, size_t>, std::vector<Boundary>> by_stage;
  for (size_t m = 0; m < timeline.machines.size(); ++m)
    for (const Worker& worker : timeline.machines[m].workers) {
      if (!worker.role.known()) continue;
      size_t k = 0;
      Boundary b{component[m]};
      for (const Job& job : worker.jobs) {  // in start order
        const Nanos start = job.start - clocks[m].offset, end = job.end - clocks[m].offset;
        if (IsPassType(job.type.str())) {
          b.last_pass = std::max(b.last_pass, end);
        } else if (b.last_pass != kLowest && start >= b.last_pass) {  // the first job after the step's passes
          b.after = start;
          by_stage[{worker.role.stage, k++}].push_back(b);
          b = Boundary{component[m]};
        }
      }
    }
  return by_stage;
}

}  // namespace

void TieReplicas(const Timeline& timeline, const std::vector<int>& component, int reference,
                 std::vector<MachineClock>* clocks, std::vector<std::string>* warnings) {
  const int sets = component.empty() ? 0 : *std::max_element(component.begin(), component.end()) + 1;
  if (sets < 2) return;
  // For sets a < b: shift[b] - shift[a] in [low, high], from every pair of
  // workers of one stage and step on the two: each one's optimizer starts
  // after the other's last pass ends.
  std::map<std::pair<int, int>, std::pair<Nanos, Nanos>> ranges;
  for (const auto& [key, boundaries] : Boundaries(timeline, component, *clocks)) {
    // Per set, what binds: its latest last pass and its earliest optimizer.
    std::map<int, std::pair<Nanos, Nanos>> per_set;
    for (const Boundary& b : boundaries) {
      auto [it, inserted] = per_set.try_emplace(b.set, kLowest, kNever);
      it->second.first = std::max(it->second.first, b.last_pass);
      it->second.second = std::min(it->second.second, b.after);
    }
    for (const auto& [x, xs] : per_set)
      for (const auto& [y, ys] : per_set) {
        if (x >= y) continue;
        auto [it, inserted] = ranges.try_emplace({x, y}, kLowest, kNever);
        // On the reference: after(x) - S[x] >= last(y) - S[y], and after(y) - S[y] >= last(x) - S[x].
        it->second.first = std::max(it->second.first, ys.first - xs.second);
        it->second.second = std::min(it->second.second, ys.second - xs.first);
      }
  }
  std::vector<Nanos> shift(static_cast<size_t>(sets), 0), within(static_cast<size_t>(sets), 0);
  std::vector<bool> tied(static_cast<size_t>(sets), false);
  const int home = component[static_cast<size_t>(reference)];
  tied[static_cast<size_t>(home)] = true;
  std::vector<int> queue = {home};
  for (size_t q = 0; q < queue.size(); ++q) {
    const int a = queue[q];
    for (const auto& [pair, range] : ranges) {
      const bool forward = pair.first == a && !tied[static_cast<size_t>(pair.second)];
      const bool backward = pair.second == a && !tied[static_cast<size_t>(pair.first)];
      if ((!forward && !backward) || range.first == kLowest || range.second == kNever) continue;
      const int b = forward ? pair.second : pair.first;
      const Nanos lo = forward ? range.first : -range.second, hi = forward ? range.second : -range.first;
      // The middle of what the all-reduce allows: off by at most half its width.
      shift[static_cast<size_t>(b)] = shift[static_cast<size_t>(a)] + lo / 2 + hi / 2;
      within[static_cast<size_t>(b)] = std::max<Nanos>(0, hi / 2 - lo / 2) + within[static_cast<size_t>(a)];
      tied[static_cast<size_t>(b)] = true;
      queue.push_back(b);
    }
  }
  const std::string& ref_name = timeline.machines[static_cast<size_t>(reference)].name;
  for (int set = 0; set < sets; ++set) {
    if (set == home) continue;
    std::string names;
    for (size_t m = 0; m < component.size(); ++m)
      if (component[m] == set) names += (names.empty() ? "" : ", ") + timeline.machines[m].name;
    const bool several = names.find(", ") != std::string::npos;
    if (!tied[static_cast<size_t>(set)]) {
      warnings->push_back(names + ": no hand-off or gradient all-reduce ties " + (several ? "them" : "it") + " to " + ref_name +
                          "'s clock; " + (several ? "their" : "its") +
                          " times are aligned among themselves only and may be off by as much as the machines' clocks are");
      continue;
    }
    for (size_t m = 0; m < component.size(); ++m)
      if (component[m] == set) {
        (*clocks)[m].offset += shift[static_cast<size_t>(set)];
        (*clocks)[m].method = ClockMethod::kReduce;
      }
    warnings->push_back(names + ": no hand-off ties " + (several ? "them" : "it") + " to " + ref_name +
                        "'s clock (another replica's pipeline); tied through the gradient all-reduce instead, within +-" +
                        FormatDuration(within[static_cast<size_t>(set)]));
  }
}

}  // namespace jobviz
