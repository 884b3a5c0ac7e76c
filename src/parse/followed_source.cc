#include "parse/followed_source.h"

#include "read/parallel_for.h"

namespace jobviz {

std::vector<WorkerLogScan> FollowedSource::Scans(bool from_cursor, int threads) const {
  std::vector<WorkerLogScan> scans(size());
  ParallelFor(size(), from_cursor ? threads : 1,
              [&](size_t i) { scans[i] = from_cursor ? log(i).ScanFromCursor() : log(i).scan(); });
  return scans;
}

std::map<std::string, size_t> FollowedSource::IndexByName() const {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < size(); ++i) index.emplace(log(i).scan().file, i);
  return index;
}

}  // namespace jobviz
