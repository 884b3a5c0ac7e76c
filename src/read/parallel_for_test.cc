#include "read/parallel_for.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <vector>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_parallel_for_test {

using jobviz::ParallelFor;

TEST_CASE("ParallelFor calls every index exactly once", "[parallel_for]") {
  for (int threads : {0, 1, 3, 64}) {
    std::vector<std::atomic<int>> calls(1000);
    ParallelFor(calls.size(), threads, [&](size_t i) { calls[i]++; });
    for (const auto& c : calls) REQUIRE(c.load() == 1);
  }
}

TEST_CASE("ParallelFor with nothing to do calls nothing", "[parallel_for]") {
  int calls = 0;
  ParallelFor(0, 4, [&](size_t) { ++calls; });
  REQUIRE(calls == 0);
}

}  // namespace unit_parallel_for_test
