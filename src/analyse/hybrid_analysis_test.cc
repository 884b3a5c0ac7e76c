#include "analyse/hybrid_analysis.h"

#include <catch2/catch.hpp>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_hybrid_analysis_test {

using namespace jobviz;

namespace {

constexpr Nanos kUs = 1000;

// Two tensor-parallel peers of one stage, 10 micro-batches forward then
// backward in one step, 1 ms a job; peer 1 starts every job `lag` later.
Timeline Peers(Nanos lag) {
  Timeline t;
  t.machines.emplace_back("m");
  for (int p = 0; p < 2; ++p) {
    Worker worker;
    worker.index = p;
    worker.role = {p, 0, p, 0};  // rank, stage, peer, replica
    for (int mb = 0; mb < 10; ++mb)
      for (const char* type : {"forward", "backward"}) {
        const Nanos start = ((type[0] == 'b' ? 20 : 0) + 2 * mb) * 1000 * kUs + (p == 1 ? lag : 0);
        worker.jobs.push_back(Job{std::to_string(mb), type, mb, start, start + 1000 * kUs, 1, 0});
      }
    std::sort(worker.jobs.begin(), worker.jobs.end(), StartsBefore);
    t.machines[0].workers.push_back(worker);
  }
  return t;
}

}  // namespace

TEST_CASE("A tensor-parallel peer behind the other is found, its jobs matched by position or, out of step, by key") {
  const Timeline in_step = Peers(100 * kUs);
  const std::vector<LaggingPeer> found = FindLaggingPeers(in_step, 2);
  REQUIRE(found.size() == 1);
  CHECK(found[0].worker == 1);
  CHECK(found[0].behind == 100 * kUs);
  CHECK(found[0].jobs == 20);
  // Out of step: peer 1 ran a job peer 0 has none of, and lacks one peer 0
  // ran; the 19 jobs both ran still match by type and micro-batch.
  Timeline out_of_step = in_step;
  std::vector<Job>& jobs = out_of_step.machines[0].workers[1].jobs;
  jobs.erase(jobs.begin() + 3);
  jobs.insert(jobs.begin(), Job{"x", "forward", 99, 0, 10 * kUs, 1, 0});
  const std::vector<LaggingPeer> keyed = FindLaggingPeers(out_of_step, 2);
  REQUIRE(keyed.size() == 1);
  CHECK(keyed[0].worker == 1);
  CHECK(keyed[0].behind == 100 * kUs);
  CHECK(keyed[0].jobs == 19);
  // Peers within the noise are not lagging.
  CHECK(FindLaggingPeers(Peers(10 * kUs), 2).empty());
}

}  // namespace unit_hybrid_analysis_test
