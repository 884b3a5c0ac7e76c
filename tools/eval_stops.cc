// How often the stop report (analyse/stop_report.h) names the right stage,
// its last and next job, on runs that stop at random (analyse/stop_simulator.h),
// and nobody on runs that finished or were cut for all: the table in
// docs/analysis.md ("Where the run stopped").
//   jobviz-eval-stops [RUNS] [FIRST_SEED] [-v]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "analyse/stop_report.h"
#include "analyse/stop_simulator.h"
#include "model/unfinished_steps.h"

using namespace jobviz;

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 500;
  const std::uint64_t first = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  const bool verbose = argc > 3 && std::strcmp(argv[3], "-v") == 0;
  struct Row { int runs = 0, right = 0; };
  std::map<std::string, Row> rows;
  Row all;
  for (int i = 0; i < runs; ++i) {
    const sim::StopRun spec = sim::RandomStopRun(first + static_cast<std::uint64_t>(i));
    sim::StopTruth truth;
    Timeline t = sim::SimulateStop(spec, &truth);
    const UnfinishedSteps unfinished = MarkUnfinishedSteps(&t);
    const StopReport report = ReportStop(t, unfinished);
    std::string why;
    const bool right = sim::StopReportRight(report, t, truth, &why);
    const std::string layout = spec.run.topology ? "hybrid" : "plain";
    const std::string kind = sim::StopKindName(spec.stop);
    for (const std::string& key : {layout + " / " + kind, std::string("barrier ") + (spec.barrier ? "yes" : "no"),
                                   std::string("in-flight lines ") + (spec.in_flight ? "yes" : "no")}) {
      ++rows[key].runs;
      rows[key].right += right;
    }
    ++all.runs;
    all.right += right;
    if (!right && verbose)
      std::printf("seed %llu: %s pp%d mp%d dp%d m%d %s%s: %s\n", static_cast<unsigned long long>(spec.seed), layout.c_str(),
                  spec.run.pp, spec.run.mp, spec.run.dp, spec.run.micro_batches, kind.c_str(),
                  spec.barrier ? " barrier" : "", why.c_str());
  }
  std::printf("| runs | right | share |\n| --- | ---: | ---: |\n");
  for (const auto& [key, row] : rows)
    std::printf("| %s | %d of %d | %.1f%% |\n", key.c_str(), row.right, row.runs, 100.0 * row.right / row.runs);
  std::printf("| **all** | %d of %d | %.1f%% |\n", all.right, all.runs, 100.0 * all.right / all.runs);
  return all.right * 100 >= all.runs * 99 ? 0 : 1;
}
