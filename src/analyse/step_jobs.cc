#include "analyse/step_jobs.h"

#include <algorithm>
#include <utility>

namespace jobviz {

StepJobs GroupByWindow(const Worker& worker, const std::vector<StepWindow>& steps, bool by_step) {
  StepJobs s;
  std::vector<std::pair<size_t, std::uint32_t>> keyed;
  keyed.reserve(worker.jobs.size());  // allocated once: this runs for every worker
  size_t hint = 0;
  for (std::uint32_t j = 0; j < worker.jobs.size(); ++j) {
    const Job& job = worker.jobs[j];
    if (!by_step) {
      keyed.emplace_back(0, j);
      continue;
    }
    if (job.step == kNoStep) continue;
    if (hint >= steps.size() || steps[hint].step != job.step) {
      const auto it = std::lower_bound(steps.begin(), steps.end(), job.step,
                                       [](const StepWindow& w, std::int64_t step) { return w.step < step; });
      if (it == steps.end() || it->step != job.step) continue;
      hint = static_cast<size_t>(it - steps.begin());
    }
    keyed.emplace_back(hint, j);
  }
  const auto by_window = [](const auto& a, const auto& b) { return a.first < b.first; };
  if (!std::is_sorted(keyed.begin(), keyed.end(), by_window))  // steps follow each other: usually sorted already
    std::stable_sort(keyed.begin(), keyed.end(), by_window);
  s.consecutive = true;
  size_t windows = keyed.empty() ? 0 : 1;
  for (size_t i = 1; i < keyed.size(); ++i) {
    s.consecutive = s.consecutive && (keyed[i].first != keyed[i - 1].first || keyed[i].second == keyed[i - 1].second + 1);
    windows += keyed[i].first != keyed[i - 1].first;
  }
  s.ranges.reserve(windows);
  if (!s.consecutive) s.order.reserve(keyed.size());
  for (size_t i = 0; i < keyed.size();) {
    size_t k = i;
    while (k < keyed.size() && keyed[k].first == keyed[i].first) {
      if (!s.consecutive) s.order.push_back(keyed[k].second);
      ++k;
    }
    if (s.consecutive)
      s.ranges.emplace_back(keyed[i].first, keyed[i].second, keyed[i].second + (k - i));
    else
      s.ranges.emplace_back(keyed[i].first, i, k);
    i = k;
  }
  return s;
}

}  // namespace jobviz
