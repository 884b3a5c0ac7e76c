#include "read/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace jobviz {

int ThreadCount(int threads) {
  return threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void ParallelFor(size_t count, int threads, const std::function<void(size_t)>& work) {
  const size_t wanted = std::min(static_cast<size_t>(ThreadCount(threads)), count);
  std::atomic<size_t> next{0};
  auto drain = [&] {
    for (size_t i = next++; i < count; i = next++) work(i);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < wanted; ++t) pool.emplace_back(drain);
  drain();
  for (std::thread& thread : pool) thread.join();
}

}  // namespace jobviz
