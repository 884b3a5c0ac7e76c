// Runs independent pieces of work on a few threads: the worker logs are
// independent of each other until the timeline is put together.
#pragma once

#include <cstddef>
#include <functional>

namespace jobviz {

// Calls `work(i)` once for every i in [0, count), on up to `threads` threads
// (0: one per core; this thread is one of them). Items are handed out one at
// a time, so a large file does not hold up the small ones behind it.
void ParallelFor(size_t count, int threads, const std::function<void(size_t)>& work);

// How many threads `threads` means (0: one per core).
int ThreadCount(int threads);

}  // namespace jobviz
