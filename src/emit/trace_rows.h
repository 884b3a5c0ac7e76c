// The rows of both Perfetto traces and the HTML report: each worker's row
// and the extra rows (lanes) its overlapping jobs need, grouped into
// processes (a machine, or a stage under --rows stage), with the row ids and
// names both traces share.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/model.h"

namespace jobviz {

// Jobs of one worker that overlap in time cannot share a row (the viewers
// nest slices, and partial overlaps break nesting), so each worker gets as
// many lanes as it needs; lane 0 is the worker's own row. Returns a lane per
// job (jobs sorted by start) and sets `lane_count` (at least 1). No two jobs
// of one lane start at the same time (a job of no duration and the next),
// so that a flow event binds to one slice (perfetto_json.cc).
// With `slack`, a job that starts at most that long before a lane's last
// job ended, and ends after it, stays on that lane (for a viewer of our own
// that draws such jobs side by side; Perfetto needs slices to nest: 0).
std::vector<int> AssignLanes(const std::vector<Job>& jobs, int* lane_count, Nanos slack = 0);

// Both Perfetto traces number processes alike: the Steps process, then the
// machines in machine order; and name a worker's rows alike.
inline constexpr int kStepsPid = 1;
inline int MachinePid(size_t machine) { return kStepsPid + 1 + static_cast<int>(machine); }
// "machine0 worker 2", and "machine0 worker 2 overlap 1" for its extra rows.
std::string RowName(const Machine& machine, const Worker& worker, int lane, const Topology& topology);

// " · stage 1 · mp 1 · replica 2": where a worker sits, the parts its
// topology has (mp with tensor-parallel peers, replica with replicas); "" when
// its stage is unknown.
std::string RoleLabel(const WorkerRole& role, const Topology& topology);

// A worker's rows in both Perfetto traces: its own and one per overlap lane.
// Row ids (JSON tids) run on over all row groups and workers in order, from
// kStepsPid + 1 (LayOutRows); a row's sort rank is its place in that order.
struct WorkerRows {
  // Per job (AssignLanes); empty when no job overlaps the one before (all on
  // lane 0), as for nearly every worker: 4 bytes a job otherwise, taken
  // while the trace is written.
  std::vector<int> lanes;
  int lane_count = 1;
  int first_tid = 0;
  int Lane(size_t job) const { return lanes.empty() ? 0 : lanes[job]; }
  int Tid(size_t job) const { return first_tid + Lane(job); }
};
inline int RowRank(int tid) { return tid - (kStepsPid + 1); }
// The rows of both Perfetto traces and the HTML report in groups, each group
// one process (pid GroupPid(g), sort index g + 1): by default one per machine,
// its workers in order (empty machines too); with Timeline::rows_by_stage one
// per pipeline stage, its workers by replica, peer index, machine and worker,
// then a "no stage" group for workers whose stage is unknown. Row ids run on
// over the groups in order, as NumberRows does over the machines.
struct RowGroup {
  std::string title;  // the process name: ProcessTitle(machine), or "stage 2"
  int machine = -1;   // the machine a machine group is; -1 for a stage group
  bool what_if = false;  // a what-if's replay (emit/what_if_rows.h): copies of workers, on no path or chain
  std::vector<std::pair<size_t, const Worker*>> workers;  // (machine index, worker), in row order
  std::vector<WorkerRows> rows;                           // per worker
};
std::vector<RowGroup> LayOutRows(const Timeline& timeline, int threads, Nanos slack = 0);
// One worker's rows (first_tid not set): lanes only when a job overlaps the one before.
WorkerRows LayOutWorker(const std::vector<Job>& jobs, Nanos slack = 0);
inline int GroupPid(size_t group) { return MachinePid(group); }
// The row id after every row of `groups`.
int NextRowTid(const std::vector<RowGroup>& groups);

// A machine's process name in the Perfetto traces: its name and, on several
// machines, how its clock was aligned (Perfetto shows process names, not
// JSON process labels): "machine1 (clock sync +4021.125 us, drift +0.000 ppm)".
std::string ProcessTitle(const Machine& machine);
// "sync +4021.125 us, drift +0.000 ppm", "reference", "not aligned".
std::string ClockText(const Machine& machine);

}  // namespace jobviz
