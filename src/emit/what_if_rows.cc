#include "emit/what_if_rows.h"

#include <algorithm>
#include <cstdio>

#include "model/time_value.h"

namespace jobviz {

std::string WhatIfTitle(const Bottleneck* bottleneck) {
  if (!bottleneck || !bottleneck->drawn_what_if) return "";
  const WhatIfKind kind = bottleneck->drawn_what_if->kind;
  const auto what_if = std::find_if(bottleneck->what_if.begin(), bottleneck->what_if.end(),
                                    [&](const WhatIf& w) { return w.kind == kind; });
  if (what_if == bottleneck->what_if.end()) return std::string("what-if: ") + WhatIfKey(kind);
  char gain[32];
  std::snprintf(gain, sizeof gain, "%.1f%%", -what_if->gain * 100.0);
  return "what-if: " + what_if->change + ": " + FormatDuration(what_if->step_time) + " per step (" + gain + ")";
}

WhatIfRows MakeWhatIfRows(const Timeline& timeline, const Bottleneck* bottleneck) {
  WhatIfRows rows;
  if (!bottleneck || !bottleneck->drawn_what_if) return rows;
  const WhatIfRun& run = *bottleneck->drawn_what_if;
  rows.title = WhatIfTitle(bottleneck);
  size_t w = 0;  // Analysis::workers order: machine, then worker
  for (size_t m = 0; m < timeline.machines.size(); ++m)
    for (const Worker& worker : timeline.machines[m].workers) {
      const std::vector<ReplayedJob>* replayed = w < run.jobs.size() ? &run.jobs[w] : nullptr;
      ++w;
      if (!replayed || replayed->empty()) continue;
      Worker copy;
      copy.machine = worker.machine;
      copy.index = worker.index;
      copy.file = worker.file;
      copy.role = worker.role;
      copy.jobs.reserve(replayed->size());
      for (const ReplayedJob& job : *replayed) {
        Job moved = worker.jobs[job.job];  // its name, type, step and source line, as measured
        moved.start = job.start;
        moved.end = job.end;
        copy.jobs.push_back(moved);
      }
      rows.workers.emplace_back(m, std::move(copy));
    }
  return rows;
}

void AddWhatIfGroup(const WhatIfRows& what_if, std::vector<RowGroup>* groups) {
  if (what_if.empty()) return;
  int next_tid = NextRowTid(*groups);
  RowGroup& group = groups->emplace_back();
  group.title = what_if.title;
  group.what_if = true;
  for (const auto& [machine, worker] : what_if.workers) {
    group.workers.emplace_back(machine, &worker);
    WorkerRows& rows = group.rows.emplace_back(LayOutWorker(worker.jobs, 0));
    rows.first_tid = next_tid;
    next_tid += rows.lane_count;
  }
}

}  // namespace jobviz
