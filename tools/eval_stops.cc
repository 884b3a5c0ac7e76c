// How often the stop report (analyse/stop_report.h) is right on runs that
// stop at random (analyse/stop_simulator.h), judged by class
// (analyse/stop_evaluation.h): the table in docs/analysis.md ("Where the
// run stopped"). Exit 1 when a class misses its goal: stops the logs time
// and all-reduce hangs 99%, runs with no stop (finished, copied, between
// steps) 99.5% named by nobody without a hedge.
//   jobviz-eval-stops [RUNS] [FIRST_SEED] [-v]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "analyse/stop_evaluation.h"
#include "analyse/stop_report.h"
#include "model/unfinished_steps.h"

using namespace jobviz;

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 500;
  const std::uint64_t first = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  const bool verbose = argc > 3 && std::strcmp(argv[3], "-v") == 0;
  struct Row { int runs = 0, right = 0; };
  std::map<std::string, Row> rows, classes;
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
    for (const std::string& key : {"kind: " + kind, "layout: " + layout + (spec.run.per_machine == spec.run.mp && spec.run.mp > 1 ? ", a stage a machine" : ""),
                                   std::string("barrier ") + (spec.barrier ? "yes" : "no"),
                                   std::string("in-flight lines ") + (spec.in_flight ? "yes" : "no"),
                                   std::string("kill lines ") + (spec.kill_lines ? "yes" : "no"),
                                   std::string(spec.run.steps == 1 ? "first step" : "later steps")}) {
      ++rows[key].runs;
      rows[key].right += right;
    }
    Row& c = classes[sim::JudgedAs(truth)];
    ++c.runs;
    c.right += right;
    ++all.runs;
    all.right += right;
    if (!right && verbose)
      std::printf("seed %llu: %s pp%d mp%d dp%d m%d steps %d %s%s%s: %s\n", static_cast<unsigned long long>(spec.seed),
                  layout.c_str(), spec.run.pp, spec.run.mp, spec.run.dp, spec.run.micro_batches, spec.run.steps,
                  kind.c_str(), spec.barrier ? " barrier" : "", spec.kill_lines ? " kill-lines" : "", why.c_str());
  }
  std::printf("| runs | right | share |\n| --- | ---: | ---: |\n");
  for (const auto& [key, row] : classes)
    std::printf("| **%s** | %d of %d | %.1f%% |\n", key.c_str(), row.right, row.runs, 100.0 * row.right / row.runs);
  for (const auto& [key, row] : rows)
    std::printf("| %s | %d of %d | %.1f%% |\n", key.c_str(), row.right, row.runs, 100.0 * row.right / row.runs);
  std::printf("| **all** | %d of %d | %.1f%% |\n", all.right, all.runs, 100.0 * all.right / all.runs);
  const auto meets = [&](const char* key, int per_thousand) {
    const auto it = classes.find(key);
    return it == classes.end() || it->second.right * 1000 >= it->second.runs * per_thousand;
  };
  return meets("stop, timed", 990) && meets("all-reduce hang", 990) && meets("no stop", 995) ? 0 : 1;
}
