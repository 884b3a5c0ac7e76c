#include "model/topology_resolver.h"

#include <algorithm>
#include <map>
#include <set>

#include "model/topology_inference.h"

namespace jobviz {

namespace {

std::string RoleText(const WorkerRole& role) {
  return "stage " + std::to_string(role.stage) + ", mp " + std::to_string(role.peer) + ", replica " +
         std::to_string(role.replica);
}

// The topology line a worker's log holds (the last one of its run), if any.
const LogRecord* PlaceLine(const Worker& worker) {
  const LogRecord* found = nullptr;
  for (const LogRecord& r : worker.markers)
    if (IsTopologyRecord(r)) found = &r;
  return found;
}

// Two workers that claim the same role: the first pair found, or "".
std::string DuplicateRole(const std::vector<Worker*>& workers) {
  std::map<std::tuple<int, int, int>, const Worker*> seen;
  for (const Worker* worker : workers) {
    if (!worker->role.known()) continue;
    const auto key = std::make_tuple(worker->role.replica, worker->role.stage, worker->role.peer);
    const auto [it, inserted] = seen.try_emplace(key, worker);
    if (!inserted)
      return it->second->file + " and " + worker->file + " both say " + RoleText(worker->role);
  }
  return "";
}

// Roles from the lines in the logs; false (roles cleared, a warning given)
// when the lines contradict each other.
bool RolesFromLines(const std::vector<Worker*>& workers, const std::vector<std::int64_t>& launcher_ranks,
                    Topology* topology, std::vector<std::string>* warnings) {
  std::vector<const LogRecord*> lines;
  size_t with_line = 0, hybrid_lines = 0;
  for (const Worker* worker : workers) {
    lines.push_back(PlaceLine(*worker));
    with_line += lines.back() != nullptr;
    hybrid_lines += lines.back() && lines.back()->kind == RecordKind::kHybridInfo;
  }
  if (with_line == 0) return false;
  // Degrees: as stated, and at least what the coordinates need; files that
  // state different degrees are a conflict.
  AxisValues degrees{1, 1, 1, 1, 1}, stated{}, stated_by{};
  for (size_t w = 0; w < workers.size(); ++w) {
    if (!lines[w]) continue;
    for (size_t a = 0; a < kAxes; ++a) {
      const std::int32_t degree = lines[w]->place.degree[a];
      if (degree > 0 && stated[a] > 0 && degree != stated[a]) {
        warnings->push_back("topology lines disagree: " + workers[static_cast<size_t>(stated_by[a])]->file + " says " +
                            AxisName(static_cast<ParallelAxis>(a)) + " degree " + std::to_string(stated[a]) + ", " +
                            workers[w]->file + " says " + std::to_string(degree) +
                            "; the lines are not used (give --topology)");
        return false;
      }
      if (degree > 0) stated[a] = degree, stated_by[a] = static_cast<std::int32_t>(w);
      degrees[a] = std::max({degrees[a], degree, lines[w]->place.index[a] + 1});
    }
  }
  // Each line was checked on its own (parse/hybrid_info.h); together, the
  // widest coordinate on every axis must still make a job that can be.
  if (RankCount(degrees) > kMaxRanks) {
    warnings->push_back("topology lines disagree: together they need " + DescribeDegrees(degrees) +
                        ", more than the 10,000,000 ranks a job can have; the lines are not used (give --topology)");
    return false;
  }
  for (size_t w = 0; w < workers.size(); ++w)
    if (lines[w]) workers[w]->role = RoleOf(lines[w]->place, degrees, lines[w]->rank);
  if (const std::string twins = DuplicateRole(workers); !twins.empty()) {
    warnings->push_back("topology lines disagree: " + twins + "; the lines are not used (give --topology)");
    for (Worker* worker : workers) worker->role = {};
    return false;
  }
  topology->source = hybrid_lines > 0 ? TopologySource::kHybridInfo : TopologySource::kShimLines;
  topology->degrees = degrees;
  if (with_line < workers.size()) {
    const auto missing = std::find(lines.begin(), lines.end(), nullptr) - lines.begin();
    warnings->push_back(std::to_string(workers.size() - with_line) + " of " + std::to_string(workers.size()) +
                        " files have no topology line (first: " + workers[static_cast<size_t>(missing)]->file +
                        "); their workers are left out of the pipelines");
  }
  // The launcher numbers ranks machine by machine; a rank_id that says
  // otherwise means a file is misplaced or the machines are misnamed.
  size_t off = 0;
  std::string first_off;
  for (size_t w = 0; w < workers.size(); ++w)
    if (lines[w] && lines[w]->rank != launcher_ranks[w]) {
      if (off++ == 0)
        first_off = workers[w]->file + " says rank " + std::to_string(lines[w]->rank) + ", its place gives " +
                    std::to_string(launcher_ranks[w]);
    }
  if (off > 0)
    warnings->push_back("topology: " + std::to_string(off) + " file(s) hold a rank other than machine index × workers " +
                        "per machine + worker index (" + first_off + "); the ranks in the lines are used");
  const std::int64_t ranks = RankCount(degrees);
  if (ranks != static_cast<std::int64_t>(workers.size()))
    warnings->push_back("topology: the degrees (" + DescribeDegrees(degrees) + ") make " + std::to_string(ranks) +
                        " ranks; " + std::to_string(workers.size()) + " worker logs were read");
  return true;
}

// --topology: ranks in launcher order, laid out along the rank order.
bool RolesFromOption(const TopologyRequest& request, const std::vector<Worker*>& workers,
                     const std::vector<std::int64_t>& launcher_ranks, Topology* topology, TopologyOutcome* outcome) {
  const AxisValues& degrees = *request.degrees;
  const std::int64_t ranks = RankCount(degrees);
  if (ranks != static_cast<std::int64_t>(workers.size())) {
    outcome->usage_error = "--topology " + request.degrees_text + " describes " + std::to_string(ranks) +
                           " ranks, but " + std::to_string(workers.size()) + " worker logs were read";
    return false;
  }
  const std::vector<ParallelAxis> order = request.rank_order.empty() ? PaddleRankOrder() : request.rank_order;
  size_t contradicted = 0;
  std::string first;
  for (size_t w = 0; w < workers.size(); ++w) {
    const WorkerRole role = RoleOf(PlaceOfRank(launcher_ranks[w], degrees, order), degrees, launcher_ranks[w]);
    if (const LogRecord* line = PlaceLine(*workers[w])) {
      const WorkerRole logged = RoleOf(line->place, degrees, line->rank);
      if (logged.stage != role.stage || logged.peer != role.peer || logged.replica != role.replica) {
        if (contradicted++ == 0)
          first = workers[w]->file + ": " + RoleText(logged) + " in the log, " + RoleText(role) + " by --topology";
      }
    }
    workers[w]->role = role;
  }
  if (contradicted > 0)
    outcome->warnings.push_back("--topology contradicts the topology lines of " + std::to_string(contradicted) +
                                " file(s) (" + first + "); --topology is used");
  topology->source = TopologySource::kOption;
  topology->degrees = degrees;
  return true;
}

}  // namespace

std::vector<std::int64_t> LauncherRanks(const Timeline& timeline) {
  size_t per_machine = 0;
  bool uniform = true;
  for (const Machine& machine : timeline.machines) {
    per_machine = std::max(per_machine, machine.workers.size());
    for (size_t w = 0; w < machine.workers.size(); ++w) uniform &= machine.workers[w].index == static_cast<int>(w);
  }
  for (const Machine& machine : timeline.machines) uniform &= machine.workers.size() == per_machine;
  std::vector<std::int64_t> ranks;
  for (size_t m = 0; m < timeline.machines.size(); ++m)
    for (const Worker& worker : timeline.machines[m].workers)
      ranks.push_back(uniform ? static_cast<std::int64_t>(m * per_machine) + worker.index
                              : static_cast<std::int64_t>(ranks.size()));
  return ranks;
}

TopologyOutcome ResolveTopology(const TopologyRequest& request, Timeline* timeline, int threads) {
  TopologyOutcome outcome;
  Topology& topology = timeline->topology;
  topology = Topology{};
  const std::vector<Worker*> workers = AllWorkers(timeline);
  for (Worker* worker : workers) worker->role = {};
  if (!timeline->stage_order.empty()) {  // --stage_order: one pipeline, as given
    topology.source = TopologySource::kStageOrder;
    int stage = 0;
    for (const auto& [m, index] : timeline->stage_order)
      for (Worker& worker : timeline->machines[m].workers)
        if (worker.index == index) worker.role.stage = stage++;
    topology.degrees[static_cast<size_t>(ParallelAxis::kPp)] = stage;
    return outcome;
  }
  if (request.none) {
    topology.detail = "--topology none";
    return outcome;
  }
  const std::vector<std::int64_t> launcher_ranks = LauncherRanks(*timeline);
  if (request.degrees) {
    RolesFromOption(request, workers, launcher_ranks, &topology, &outcome);
    return outcome;
  }
  if (RolesFromLines(workers, launcher_ranks, &topology, &outcome.warnings)) return outcome;
  InferTopology(timeline, threads);
  return outcome;
}

}  // namespace jobviz
