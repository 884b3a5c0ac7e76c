#include "align/clock_jumps.h"

#include <algorithm>
#include <tuple>

#include "align/pipeline_order.h"
#include "read/parallel_for.h"
#include "model/time_value.h"

namespace jobviz {

namespace {

// Bounds a clock must hold to before a disagreement counts, both ways (a
// forward hand-off bounds the difference from above, a backward one from
// below): a job with a stale timer disagrees alone, and the bounds of its
// kind after it agree with it.
constexpr size_t kMinBounds = 3;
// More large disagreements than 2 and one per 8 steps: not a clock's.
constexpr size_t kMaxDisagreements = 2, kStepsPerDisagreement = 8;

// A job's place among the worker's jobs of its type and micro-batch, in
// file order: the step it is in, counted from the worker's first, whatever
// its clock says (Worker::jobs is in time order, which a jump back reorders).
struct Placed {
  std::uint32_t type = 0;
  std::int64_t micro_batch = 0;
  std::int64_t occurrence = 0;
  size_t index = 0;  // in Worker::jobs
  auto Key() const { return std::tie(type, micro_batch, occurrence); }
};

// Every job placed, sorted by (type, micro-batch, occurrence): two workers'
// jobs are then paired in one pass over both (a map of one worker's jobs
// cost 30 ms a run of 2,048 workers).
std::vector<Placed> PlacedJobs(const Worker& worker) {
  std::vector<Placed> placed(worker.jobs.size());
  for (size_t i = 0; i < placed.size(); ++i) placed[i] = {worker.jobs[i].type.index(), worker.jobs[i].micro_batch, 0, i};
  std::sort(placed.begin(), placed.end(), [&](const Placed& x, const Placed& y) {
    return std::tie(x.type, x.micro_batch, worker.jobs[x.index].line) < std::tie(y.type, y.micro_batch, worker.jobs[y.index].line);
  });
  for (size_t i = 1; i < placed.size(); ++i)
    if (placed[i].type == placed[i - 1].type && placed[i].micro_batch == placed[i - 1].micro_batch)
      placed[i].occurrence = placed[i - 1].occurrence + 1;
  return placed;
}

// Each job's occurrence, by its index in Worker::jobs.
std::vector<std::int64_t> Occurrences(const Worker& worker) {
  std::vector<std::int64_t> occurrence(worker.jobs.size());
  for (const Placed& job : PlacedJobs(worker)) occurrence[job.index] = job.occurrence;
  return occurrence;
}

// One hand-off's bound on o[b] - o[a] (a: the lower stage's machine).
struct Bound {
  std::int64_t occurrence;
  std::uint64_t line_a;
  bool upper;
  Nanos value;
};

std::vector<Bound> BoundsBetween(const Worker& a, const Worker& b, DirectionsByType& directions) {
  const std::vector<Placed> on_a = PlacedJobs(a), on_b = PlacedJobs(b);
  std::vector<Bound> bounds;
  size_t at_a = 0;
  for (const Placed& placed_b : on_b) {
    const Job& job_b = b.jobs[placed_b.index];
    const Direction direction = directions.Of(job_b.type);
    if (direction == Direction::kOther) continue;
    while (at_a < on_a.size() && on_a[at_a].Key() < placed_b.Key()) ++at_a;
    if (at_a == on_a.size() || on_a[at_a].Key() != placed_b.Key()) continue;
    const Job& job_a = a.jobs[on_a[at_a].index];
    if (direction == Direction::kForward)  // a's forward feeds b's: o[b] - o[a] <= b.start - a.end
      bounds.push_back({placed_b.occurrence, job_a.line, true, SaturatingSub(job_b.start, job_a.end)});
    else  // b's backward feeds a's: o[b] - o[a] >= b.end - a.start
      bounds.push_back({placed_b.occurrence, job_a.line, false, SaturatingSub(job_b.end, job_a.start)});
  }
  std::sort(bounds.begin(), bounds.end(), [](const Bound& x, const Bound& y) {
    return std::tie(x.occurrence, x.line_a) < std::tie(y.occurrence, y.line_a);
  });
  return bounds;
}

// A run of bounds that agree: the range of o[b] - o[a] they allow.
struct Segment {
  size_t first = 0, count = 0;
  Nanos lo = kLowest, hi = kNever;
  Nanos Centre() const { return lo / 2 + hi / 2; }
};

// The runs of agreeing bounds, in order, those too short or one-sided to
// say where a clock was left out. Returns none when the bounds disagree by
// kMinClockJump or more too often for a clock that jumps now and then: then
// the hand-offs as paired (type, micro-batch, place) are not what the
// schedule did, and say nothing about the clocks.
std::vector<Segment> Segments(const std::vector<Bound>& bounds) {
  std::vector<Segment> segments;
  Segment current;
  size_t large = 0;  // disagreements by kMinClockJump or more
  for (size_t i = 0; i < bounds.size(); ++i) {
    const Bound& bound = bounds[i];
    const Nanos lo = bound.upper ? current.lo : std::max(current.lo, bound.value);
    const Nanos hi = bound.upper ? std::min(current.hi, bound.value) : current.hi;
    if (lo > hi) {  // disagrees with the bounds before it: a new run starts here
      large += SaturatingSub(lo, hi) >= kMinClockJump;
      segments.push_back(current);
      current = Segment{i, 0, bound.upper ? kLowest : bound.value, bound.upper ? bound.value : kNever};
    } else {
      current.lo = lo;
      current.hi = hi;
    }
    ++current.count;
  }
  if (current.count > 0) segments.push_back(current);
  // A jump disagrees once, a stale timer twice; a pairing that does not fit
  // the schedule every few steps.
  const std::int64_t steps = bounds.empty() ? 0 : bounds.back().occurrence - bounds.front().occurrence + 1;
  if (large > kMaxDisagreements + static_cast<size_t>(steps) / kStepsPerDisagreement) return {};
  std::erase_if(segments, [](const Segment& s) { return s.count < kMinBounds || s.lo == kLowest || s.hi == kNever; });
  return segments;
}

// How far apart two ranges are (<= 0: they overlap).
Nanos Gap(const Segment& x, const Segment& y) { return std::max(SaturatingSub(y.lo, x.hi), SaturatingSub(x.lo, y.hi)); }

// Each machine's parent on a tree out from the reference along machines
// that hand over (-1: the reference, or none reached), and the machines in
// the order reached.
struct Tree {
  std::vector<int> parent, order;
};
Tree TreeFrom(size_t machines, const std::vector<std::pair<int, int>>& pairs, int reference) {
  Tree tree{std::vector<int>(machines, -1), {reference}};
  std::vector<bool> reached(machines, false);
  reached[static_cast<size_t>(reference)] = true;
  for (size_t q = 0; q < tree.order.size(); ++q)
    for (const auto& [x, y] : pairs)
      for (const auto& [from, to] : {std::pair{x, y}, std::pair{y, x}})
        if (from == tree.order[q] && !reached[static_cast<size_t>(to)]) {
          reached[static_cast<size_t>(to)] = true;
          tree.parent[static_cast<size_t>(to)] = from;
          tree.order.push_back(to);
        }
  return tree;
}

// (step, shift) steps of a clock.
using Steps = std::vector<std::pair<std::int64_t, Nanos>>;

// The same jump seen on several stage pairs (tensor-parallel peers), once.
Steps OnePerJump(Steps seen) {
  std::sort(seen.begin(), seen.end());
  Steps once;
  for (const auto& step : seen)
    if (once.empty() || step.first > once.back().first + 1) once.push_back(step);
  return once;
}

// Two clocks' steps added up, those a step apart as one, the small ones gone.
Steps Combined(Steps steps) {
  std::sort(steps.begin(), steps.end());
  Steps merged;
  for (const auto& [occurrence, shift] : steps) {
    if (!merged.empty() && occurrence <= merged.back().first + 1) merged.back().second = SaturatingAdd(merged.back().second, shift);
    else merged.emplace_back(occurrence, shift);
  }
  std::erase_if(merged, [](const auto& step) { return step.second > -kMinClockJump && step.second < kMinClockJump; });
  return merged;
}

// Whether a machine's hand-offs reach far enough past step `occurrence` to
// say if its clock moved there (its parent's jump: it moved along, or it
// shows the opposite jump and stayed): as many bounds after that step, both
// ways, as a run of agreeing bounds needs (the step holding a jump is part
// old clock, part new). A log behind the others (jobviz follow reads logs
// as they are written) does not yet say; nor, at a run's last step, does
// a machine that seldom hands over, and it then keeps its own clock, as
// machines mostly do.
bool ReachesPast(const std::vector<Bound>& bounds, std::int64_t occurrence) {
  size_t count = 0;
  bool upper = false, lower = false;
  for (const Bound& bound : bounds)
    if (bound.occurrence > occurrence) {
      ++count;
      (bound.upper ? upper : lower) = true;
    }
  return count >= kMinBounds && upper && lower;
}

// Whether machine m's clock is known against the reference past step
// `occurrence`: every machine from it up to the reference reaches past it.
bool KnownPast(const Tree& tree, const std::vector<std::vector<Bound>>& with_parent, int m, std::int64_t occurrence) {
  for (; tree.parent[static_cast<size_t>(m)] >= 0; m = tree.parent[static_cast<size_t>(m)])
    if (!ReachesPast(with_parent[static_cast<size_t>(m)], occurrence)) return false;
  return true;
}

// From the first job of step `occurrence` on, in each log of the machine.
std::vector<std::pair<std::string, std::uint64_t>> FromLines(const Machine& machine, std::int64_t occurrence) {
  std::vector<std::pair<std::string, std::uint64_t>> lines;
  for (const Worker& worker : machine.workers) {
    const std::vector<std::int64_t> occ = Occurrences(worker);
    std::uint64_t first = UINT64_MAX, last = 0;
    for (size_t i = 0; i < worker.jobs.size(); ++i) {
      last = std::max<std::uint64_t>(last, worker.jobs[i].line);
      if (occ[i] >= occurrence) first = std::min<std::uint64_t>(first, worker.jobs[i].line);
    }
    // A log not yet that far: what it writes from now on.
    lines.emplace_back(worker.file, first != UINT64_MAX ? first : last + 1);
  }
  return lines;
}

}  // namespace

std::vector<ClockJump> FindClockJumps(const Timeline& timeline, int reference, int threads) {
  if (timeline.machines.size() < 2) return {};
  struct StagePair {
    int machine_a, machine_b;
    const Worker* a;
    const Worker* b;
  };
  std::vector<StagePair> stage_pairs;
  std::vector<std::pair<int, int>> machine_pairs;
  for (const PipelineChain& chain : PipelineChains(timeline))
    for (size_t k = 0; k + 1 < chain.stages.size(); ++k) {
      const auto& [ma, a] = chain.stages[k];
      const auto& [mb, b] = chain.stages[k + 1];
      if (ma == mb || chain.numbers[k] + 1 != chain.numbers[k + 1]) continue;
      stage_pairs.push_back({ma, mb, a, b});
      machine_pairs.emplace_back(ma, mb);
    }
  if (stage_pairs.empty()) return {};
  const Tree tree = TreeFrom(timeline.machines.size(), machine_pairs, reference);
  // The jumps of each machine's clock against its parent's: where the
  // bounds of its hand-offs with the parent stop agreeing.
  std::vector<Steps> against_parent(timeline.machines.size());
  std::vector<std::vector<Bound>> with_parent(timeline.machines.size());
  std::vector<bool> looked(timeline.machines.size(), false);
  struct Look {
    const StagePair* pair;
    size_t child;
    bool b_child;
  };
  std::vector<Look> looks;
  for (const StagePair& pair : stage_pairs) {
    const bool b_child = tree.parent[static_cast<size_t>(pair.machine_b)] == pair.machine_a;
    const bool a_child = tree.parent[static_cast<size_t>(pair.machine_a)] == pair.machine_b;
    if (!b_child && !a_child) continue;  // off the tree: the tree's pairs say it all
    // One stage pair a machine: its tensor-parallel peers' pairs say the
    // same, and each costs a pass over both workers' jobs.
    const size_t child = static_cast<size_t>(b_child ? pair.machine_b : pair.machine_a);
    if (looked[child]) continue;
    looked[child] = true;
    looks.push_back({&pair, child, b_child});
  }
  // Each machine's pair on its own (16,383 of them at 131,072 GPUs), then read in order.
  ParallelFor(looks.size(), threads, [&](size_t k) {
    DirectionsByType directions;
    with_parent[looks[k].child] = BoundsBetween(*looks[k].pair->a, *looks[k].pair->b, directions);
  });
  for (const auto& [pair, child, b_child] : looks) {
    const std::vector<Bound>& bounds = with_parent[child];
    const std::vector<Segment> segments = Segments(bounds);
    for (size_t s = 1; s < segments.size(); ++s) {
      if (Gap(segments[s - 1], segments[s]) < kMinClockJump) continue;
      // o[b] - o[a] grows by the jump when b's clock jumps forward.
      const Nanos moved = SaturatingSub(segments[s].Centre(), segments[s - 1].Centre());
      against_parent[child].emplace_back(bounds[segments[s].first].occurrence, b_child ? moved : -moved);
    }
  }
  // Against the reference: the parent's jumps plus its own against the
  // parent. A machine whose parent jumped moves with it, or shows the
  // opposite jump against it and stays; when the reference's clock jumps,
  // every machine it reaches is moved the other way. A parent's jump past
  // what the machine's hand-offs reach is left for a later look: said now,
  // it would move the machine, and be taken back once its log got there.
  std::vector<Steps> against_reference(timeline.machines.size());
  std::vector<ClockJump> jumps;
  for (const int m : tree.order) {
    const int parent = tree.parent[static_cast<size_t>(m)];
    if (parent < 0) continue;
    Steps steps = against_reference[static_cast<size_t>(parent)];
    std::erase_if(steps, [&](const auto& step) { return !ReachesPast(with_parent[static_cast<size_t>(m)], step.first); });
    // Its own jump against a parent whose clock is not yet known there
    // (the parent's log, or one between it and the reference, is behind)
    // may be the parent's: left for a later look as well.
    Steps own = OnePerJump(against_parent[static_cast<size_t>(m)]);
    std::erase_if(own, [&](const auto& step) { return !KnownPast(tree, with_parent, parent, step.first); });
    steps.insert(steps.end(), own.begin(), own.end());
    against_reference[static_cast<size_t>(m)] = Combined(std::move(steps));
    const Machine& machine = timeline.machines[static_cast<size_t>(m)];
    for (const auto& [occurrence, shift] : against_reference[static_cast<size_t>(m)])
      jumps.push_back({machine.name, shift, FromLines(machine, occurrence), timeline.machines[static_cast<size_t>(parent)].name});
  }
  return jumps;
}

void UndoClockJumps(const std::vector<ClockJump>& jumps, Timeline& timeline) {
  if (jumps.empty()) return;
  for (Machine& machine : timeline.machines)
    for (Worker& worker : machine.workers) {
      // The shifts that apply from each line on, in line order.
      std::vector<std::pair<std::uint64_t, Nanos>> from;
      for (const ClockJump& jump : jumps)
        for (const auto& [file, line] : jump.from_lines)
          if (file == worker.file) from.emplace_back(line, jump.shift);
      if (from.empty()) continue;
      std::sort(from.begin(), from.end());
      const auto back = [&](std::uint64_t line, Nanos t) {
        Nanos total = 0;
        for (const auto& [first, shift] : from)
          if (line >= first) total = SaturatingAdd(total, shift);
        return SaturatingSub(t, total);
      };
      for (Job& job : worker.jobs) {
        job.start = back(job.line, job.start);
        job.end = back(job.line, job.end);
      }
      std::sort(worker.jobs.begin(), worker.jobs.end(), StartsBefore);
      for (LogRecord& record : worker.markers) record.start = back(record.line, record.start);
      for (InFlightJob& job : worker.in_flight) {
        job.start = back(job.line, job.start);
        job.seen = back(job.line, job.seen);
      }
      if (worker.end.stamped != 0) worker.end.stamped = back(UINT64_MAX, worker.end.stamped);
    }
}

std::string ClockJumpText(const ClockJump& jump) {
  const std::string size = FormatDuration(jump.shift < 0 ? -jump.shift : jump.shift);
  std::string where;
  if (!jump.from_lines.empty()) where = " at " + jump.from_lines.front().first + ":" + std::to_string(jump.from_lines.front().second);
  return jump.machine + ": its clock jumps " + size + (jump.shift > 0 ? " forward" : " back") + where +
         " (found from its hand-offs with " + jump.against + "); its times from there on are moved " +
         (jump.shift > 0 ? "back " : "forward ") + size;
}

}  // namespace jobviz
