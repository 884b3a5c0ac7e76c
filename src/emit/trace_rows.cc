#include "emit/trace_rows.h"

#include <algorithm>
#include <map>
#include <cstdio>
#include <tuple>

#include "read/parallel_for.h"

namespace jobviz {

std::string RoleLabel(const WorkerRole& role, const Topology& topology) {
  if (!role.known()) return "";
  std::string label = " · stage " + std::to_string(role.stage);
  if (topology.peer_degree() > 1) label += " · mp " + std::to_string(role.peer);
  if (topology.replicas() > 1) label += " · replica " + std::to_string(role.replica);
  return label;
}

std::string RowName(const Machine& machine, const Worker& worker, int lane, const Topology& topology) {
  std::string name = WorkerName(machine, worker) + RoleLabel(worker.role, topology);
  if (lane > 0) name += " overlap " + std::to_string(lane);
  return name;
}

std::vector<RowGroup> LayOutRows(const Timeline& timeline, int threads, Nanos slack) {
  std::vector<RowGroup> groups;
  if (!timeline.rows_by_stage) {
    for (size_t m = 0; m < timeline.machines.size(); ++m) {
      RowGroup& group = groups.emplace_back();
      group.title = ProcessTitle(timeline.machines[m]);
      group.machine = static_cast<int>(m);
      for (const Worker& worker : timeline.machines[m].workers) group.workers.emplace_back(m, &worker);
    }
  } else {
    std::map<int, std::vector<std::pair<size_t, const Worker*>>> by_stage;  // -1: unknown, put last below
    for (size_t m = 0; m < timeline.machines.size(); ++m)
      for (const Worker& worker : timeline.machines[m].workers) by_stage[worker.role.stage].emplace_back(m, &worker);
    const auto add = [&](int stage, std::vector<std::pair<size_t, const Worker*>> members) {
      std::stable_sort(members.begin(), members.end(), [](const auto& a, const auto& b) {
        return std::tie(a.second->role.replica, a.second->role.peer) < std::tie(b.second->role.replica, b.second->role.peer);
      });
      RowGroup& group = groups.emplace_back();
      group.title = stage >= 0 ? "stage " + std::to_string(stage) : "no stage";
      group.workers = std::move(members);
    };
    for (auto& [stage, members] : by_stage)
      if (stage >= 0) add(stage, std::move(members));
    if (by_stage.count(-1)) add(-1, std::move(by_stage[-1]));
  }
  std::vector<std::pair<const Worker*, WorkerRows*>> all;
  for (RowGroup& group : groups) {
    group.rows.resize(group.workers.size());
    for (size_t w = 0; w < group.workers.size(); ++w) all.emplace_back(group.workers[w].second, &group.rows[w]);
  }
  ParallelFor(all.size(), threads, [&](size_t i) { *all[i].second = LayOutWorker(all[i].first->jobs, slack); });
  int next_tid = kStepsPid + 1;
  for (auto& [worker, r] : all) {
    r->first_tid = next_tid;
    next_tid += r->lane_count;
  }
  return groups;
}

int NextRowTid(const std::vector<RowGroup>& groups) {
  int next = kStepsPid + 1;
  for (const RowGroup& group : groups)
    for (const WorkerRows& rows : group.rows) next = std::max(next, rows.first_tid + rows.lane_count);
  return next;
}

WorkerRows LayOutWorker(const std::vector<Job>& jobs, Nanos slack) {
  WorkerRows rows;
  // AssignLanes puts every job on lane 0 exactly when none starts before the one before it ended, nor with it.
  const auto overlaps = [&](const Job& before, const Job& job) {
    return job.start == before.start || (job.start < before.end && (job.start + slack < before.end || job.end < before.end));
  };
  if (std::adjacent_find(jobs.begin(), jobs.end(), overlaps) != jobs.end()) rows.lanes = AssignLanes(jobs, &rows.lane_count, slack);
  return rows;
}

std::vector<int> AssignLanes(const std::vector<Job>& jobs, int* lane_count, Nanos slack) {
  std::vector<Nanos> lane_start, lane_end;  // each lane's last job's start, and when the lane becomes free
  std::vector<int> lanes;
  lanes.reserve(jobs.size());
  // Not after a job that started at the same time (one of no duration): a
  // flow arrow binds to the slice that starts at its time on its row.
  const auto fits = [&](size_t lane, const Job& job) {
    const Nanos end = lane_end[lane];
    return lane_start[lane] != job.start && (end <= job.start || (end <= job.start + slack && job.end >= end));
  };
  for (const Job& job : jobs) {
    size_t lane = 0;
    while (lane < lane_end.size() && !fits(lane, job)) ++lane;
    if (lane == lane_end.size()) lane_start.push_back(job.start), lane_end.push_back(job.end);
    lane_start[lane] = job.start;
    lane_end[lane] = job.end;
    lanes.push_back(static_cast<int>(lane));
  }
  *lane_count = std::max<int>(1, static_cast<int>(lane_end.size()));
  return lanes;
}

std::string ClockText(const Machine& machine) {
  if (machine.clock_method == "reference") return "reference";
  if (machine.clock_method == "none") return "not aligned";
  if (machine.clock_method == "unneeded") return "as logged: no alignment needed";
  char drift[48];
  std::snprintf(drift, sizeof drift, " us, drift %+.3f ppm", machine.clock_drift_ppm);
  return machine.clock_method + " " + (machine.clock_offset >= 0 ? "+" : "") + FormatMicros(machine.clock_offset) +
         drift;
}

std::string ProcessTitle(const Machine& machine) {
  if (machine.clock_method.empty()) return machine.name;
  return machine.name + " (clock " + ClockText(machine) + ")";
}

}  // namespace jobviz
