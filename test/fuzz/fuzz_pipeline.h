// What the fuzz targets share: the whole pipeline after parsing, run on
// scans the way `jobviz` runs it (build, align, steps, window, analysis and
// every emitter), with the invariants that must hold for any input.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "align/clock_align.h"
#include "analyse/analysis.h"
#include "analyse/fail_on.h"
#include "analyse/summary.h"
#include "emit/emitter.h"
#include "model/step_finder.h"
#include "model/step_window.h"
#include "parse/timeline_builder.h"
#include "model/topology_resolver.h"

namespace jobviz::fuzz {

inline void Require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

// Runs everything after parsing; `choices` picks run, clock mode and window.
inline void RunPipeline(const LogSet& logs, std::vector<WorkerLogScan> scans, std::uint8_t choices) {
  const RunChoice run{static_cast<RunChoice::Kind>(choices % 3), 1 + (choices >> 6)};
  BuildResult built = BuildTimeline(logs, scans, run);
  if (!built.error.empty()) return;
  FinishedRun finished;
  finished.timeline = std::move(built.timeline);
  // Where the workers sit: from the lines, inferred, or (bit 4) a --topology
  // of every worker its own stage in two replicas when the count allows.
  TopologyRequest topology;
  if (choices & 0x10) {
    size_t workers = 0;
    for (const Machine& machine : finished.timeline.machines) workers += machine.workers.size();
    if (workers % 2 == 0 && workers > 0) topology.degrees = AxisValues{2, static_cast<std::int32_t>(workers / 2), 1, 1, 1};
  }
  const TopologyOutcome placed = ResolveTopology(topology, &finished.timeline);
  Require(placed.usage_error.empty(), "a --topology that fits the files is no usage error");
  for (const Machine& machine : finished.timeline.machines)
    for (const Worker& worker : machine.workers)
      Require(!finished.timeline.topology.hybrid() || !worker.role.known() ||
                  worker.role.stage < finished.timeline.topology.pipeline_degree(),
              "a worker's stage is below the pipeline degree");
  AlignOptions align;
  align.mode = static_cast<AlignMode>((choices >> 2) % 4);
  finished.clocks = AlignClocks(finished.timeline, align);
  FindSteps(finished.timeline);
  std::string error;
  if ((choices & 0x20) && !finished.timeline.steps.empty()) {
    const StepRange range{finished.timeline.steps.front().step, finished.timeline.steps.front().step};
    Require(KeepSteps(range, finished.timeline, &error) || !error.empty(), "a failed --steps says why");
  }
  for (const Machine& machine : finished.timeline.machines)
    for (const Worker& worker : machine.workers) {
      finished.jobs += worker.jobs.size();
      for (const Job& job : worker.jobs) Require(job.end >= job.start, "drawn jobs end after they start");
    }
  finished.analysis = Analyze(finished.timeline);
  finished.summary = SummaryJson(finished.analysis, finished.timeline, RunCounts{});
  Require(finished.analysis.bubble_ratio >= 0, "the bubble ratio is not negative");
  std::string error_text;
  (void)ResolveMetric(finished.summary, "steps.duration_us.p95", &error_text);
  for (OutputFormat format : {OutputFormat::kPerfettoJson, OutputFormat::kPerfettoProto, OutputFormat::kChromeJson,
                              OutputFormat::kSummaryTables, OutputFormat::kSummaryJson, OutputFormat::kSummaryMarkdown,
                              OutputFormat::kHtml}) {
    std::string out;
    EmitterFor(format).emit(finished, [&](std::string_view piece) { out.append(piece); });
    if (format == OutputFormat::kPerfettoJson || format == OutputFormat::kChromeJson ||
        format == OutputFormat::kSummaryJson)
      Require(nlohmann::json::accept(out), "JSON outputs are valid JSON");
  }
}

}  // namespace jobviz::fuzz
