#include "cli/run_report.h"

#include <catch2/catch.hpp>
#include <sstream>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_run_report_test {

using namespace jobviz;

TEST_CASE("Every report line stays short when files hold many different numbers of runs") {
  FinishedRun run;
  for (int f = 0; f < 2048; ++f) {
    RunSummary file{"logs/machine" + std::to_string(f / 8) + "/workerlog." + std::to_string(f % 8), {}};
    for (int r = 0; r < 1 + f % 40; ++r) file.runs.push_back({static_cast<size_t>(r), static_cast<size_t>(r + 1), 1, "", 3, 0, 0, {}});
    run.runs.push_back(std::move(file));
  }
  const std::string report = RunReport(run, 1);
  std::istringstream lines(report);
  bool runs_line = false;
  for (std::string line; std::getline(lines, line);) {
    INFO(line);
    CHECK(line.size() < 300);
    if (line.rfind("jobviz: runs: ", 0) == 0) {
      runs_line = true;
      CHECK(line.find("1 to 40 per file") != std::string::npos);
      CHECK(line.find("jobs of the other runs not drawn") != std::string::npos);
    }
  }
  CHECK(runs_line);
}

TEST_CASE("A machine of 40 workers gets one short jobs line, with the extremes; -v lists every worker") {
  FinishedRun run;
  run.timeline.machines.emplace_back("machine0");
  for (int w = 0; w < 40; ++w) {
    Worker worker;
    worker.index = w;
    worker.jobs.resize(w == 7 ? 60 : 68);
    run.timeline.machines[0].workers.push_back(worker);
  }
  run.jobs = 39 * 68 + 60;
  const std::string report = RunReport(run, 1);
  const size_t at = report.find("jobviz: jobs: machine0");
  REQUIRE(at != std::string::npos);
  const std::string line = report.substr(at, report.find('\n', at) - at);
  CHECK(line == "jobviz: jobs: machine0 40 workers: 60 (worker 7) to 68 (worker 0) jobs per worker");
  const std::string verbose = RunReport(run, 2);
  CHECK(verbose.find("worker 39: 68") != std::string::npos);
}

}  // namespace unit_run_report_test
