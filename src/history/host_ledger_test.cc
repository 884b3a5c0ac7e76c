#include "history/host_ledger.h"

#include <catch2/catch.hpp>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_host_ledger_test {

using namespace jobviz;

namespace {

LedgerWorker Worker(std::int64_t run, const std::string& job, const std::string& host, int gpu, int stage,
                    std::optional<double> slow = std::nullopt, double cost_us = 0, bool first_stop = false) {
  LedgerWorker w;
  w.run = run;
  w.run_name = job;
  w.worker.host = host;
  w.worker.machine_dir = host;
  w.worker.gpu = gpu;
  w.worker.stage = stage;
  w.worker.slow_factor = slow;
  w.worker.cost_us = cost_us;
  w.worker.first_stop = first_stop;
  return w;
}

const HostLine& Find(const std::vector<HostLine>& lines, const std::string& host) {
  for (const HostLine& line : lines)
    if (line.host == host) return line;
  FAIL("no line for " << host);
  return lines.front();
}

}  // namespace

TEST_CASE("A host slow in runs of different jobs is the host's doing, and ranks first by the time lost") {
  std::vector<LedgerWorker> workers;
  for (int run = 1; run <= 4; ++run) {
    const std::string job = run % 2 ? "llama" : "gpt";
    workers.push_back(Worker(run, job, "bad", 0, run % 2, run >= 2 ? std::optional(1.4) : std::nullopt, run >= 2 ? 500 : 0));
    workers.push_back(Worker(run, job, "good", 0, 1 - run % 2));
    workers.push_back(Worker(run, job, "flaky", 0, 2, std::nullopt, 0, run == 4));
  }
  const HostLedger ledger = RankHosts(FactsOfWorkers(workers));
  CHECK(ledger.runs == 4);
  REQUIRE(ledger.hosts.size() == 2);  // "good" was never slow nor first to stop: no line
  CHECK(ledger.hosts[0].host == "bad");
  CHECK(ledger.hosts[0].lost_us == Approx(1500));
  CHECK(ledger.hosts[0].slow == 3);
  CHECK(ledger.hosts[0].runs == 4);
  CHECK(ledger.hosts[0].cause == SlowCause::kHost);
  CHECK(ledger.hosts[0].slow_runs == std::vector<std::int64_t>{2, 3, 4});
  CHECK(ledger.hosts[1].host == "flaky");  // stopped first once: before a host that did nothing
  CHECK(ledger.hosts[1].first_stop == 1);
  CHECK(ledger.hosts[1].stop_runs == std::vector<std::int64_t>{4});
  CHECK(ledger.gpus.size() == 2);
}

TEST_CASE("A job's stage slow in most of its runs, whichever host ran it, is the job's, not those hosts'") {
  std::vector<LedgerWorker> workers;
  // Job "heavy": its last stage is slow in every run, wherever it runs (three hosts over three runs).
  const std::vector<std::string> hosts = {"h1", "h2", "h3"};
  for (int run = 1; run <= 3; ++run)
    for (size_t h = 0; h < hosts.size(); ++h) {
      const int stage = static_cast<int>((h + static_cast<size_t>(run)) % 3);
      workers.push_back(Worker(run, "heavy", hosts[h], 0, stage, stage == 2 ? std::optional(1.3) : std::nullopt, stage == 2 ? 100 : 0));
    }
  // And a host slow once where the others that ran the same stage were not.
  workers.push_back(Worker(4, "light", "h4", 0, 0, 1.5, 50));
  workers.push_back(Worker(5, "light", "h1", 0, 0));
  workers.push_back(Worker(6, "light", "h2", 0, 0));
  const HostLedger ledger = RankHosts(FactsOfWorkers(workers));
  for (const std::string& host : hosts) {
    INFO(host);
    CHECK(Find(ledger.hosts, host).cause == SlowCause::kJob);
    CHECK(Find(ledger.hosts, host).where == "stage 2 of heavy");
  }
  CHECK(Find(ledger.hosts, "h4").cause == SlowCause::kHost);
}

}  // namespace unit_host_ledger_test
