#include "emit/html_shown.h"

#include <algorithm>
#include <limits>
#include <map>

#include "emit/what_if_rows.h"

namespace jobviz {

namespace {

// Each shown step's span in the replay (ShownWhatIf::steps).
std::vector<std::pair<Nanos, Nanos>> ReplayedSteps(const Timeline& shown, const ShownWhatIf& what_if) {
  struct Moved {
    Nanos measured_first = std::numeric_limits<Nanos>::max(), replayed_first = std::numeric_limits<Nanos>::max();
    Nanos measured_last = std::numeric_limits<Nanos>::min(), replayed_last = std::numeric_limits<Nanos>::min();
  };
  std::map<std::int64_t, Moved> by_step;
  size_t w = 0;
  for (const Machine& machine : shown.machines)
    for (const Worker& worker : machine.workers) {
      const auto& times = what_if.times[w++];
      for (size_t j = 0; j < worker.jobs.size(); ++j) {
        const Job& job = worker.jobs[j];
        if (times[j].first < 0 || job.step == kNoStep) continue;
        Moved& step = by_step[job.step];
        step.measured_first = std::min(step.measured_first, job.start);
        step.replayed_first = std::min(step.replayed_first, times[j].first);
        step.measured_last = std::max(step.measured_last, job.end);
        step.replayed_last = std::max(step.replayed_last, times[j].second);
      }
    }
  std::vector<std::pair<Nanos, Nanos>> out;
  out.reserve(shown.steps.size());
  for (const StepSpan& span : shown.steps) {
    const auto it = by_step.find(span.step);
    if (it == by_step.end()) {
      out.emplace_back(span.start, span.end);
      continue;
    }
    const Moved& m = it->second;
    const Nanos start = span.start + (m.replayed_first - m.measured_first);
    out.emplace_back(start, std::max(start, span.end + (m.replayed_last - m.measured_last)));
  }
  return out;
}

}  // namespace

std::vector<std::vector<std::uint32_t>> OriginalIndices(const Timeline& timeline, const std::function<bool(const Job&)>& keep) {
  std::vector<std::vector<std::uint32_t>> out;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) {
      out.emplace_back();
      for (std::uint32_t j = 0; j < worker.jobs.size(); ++j)
        if (!keep || keep(worker.jobs[j])) out.back().push_back(j);
    }
  return out;
}

std::optional<std::uint32_t> ShownIndex(const std::vector<std::vector<std::uint32_t>>& original, size_t worker,
                                        std::uint32_t job) {
  if (worker >= original.size()) return std::nullopt;
  const auto it = std::lower_bound(original[worker].begin(), original[worker].end(), job);
  if (it == original[worker].end() || *it != job) return std::nullopt;
  return static_cast<std::uint32_t>(it - original[worker].begin());
}

ShownPaths MapPaths(const Timeline& shown, const std::vector<std::vector<std::uint32_t>>& original,
                    const Bottleneck& b) {
  ShownPaths out;
  size_t w = 0;
  for (const Machine& machine : shown.machines)
    for (const Worker& worker : machine.workers) {
      out.marked.emplace_back(worker.jobs.size(), false);
      if (w < b.marks.size())
        for (std::uint32_t j : b.marks[w])
          if (const auto k = ShownIndex(original, w, j)) out.marked.back()[*k] = true;
      ++w;
    }
  for (const CriticalPathStep& step : b.critical_paths) {
    std::vector<std::pair<size_t, std::uint32_t>> path;
    for (const CriticalJob& job : step.jobs)
      if (const auto k = ShownIndex(original, job.worker, job.job)) path.emplace_back(job.worker, *k);
    if (!path.empty()) out.paths.push_back(std::move(path));
  }
  return out;
}

ShownWhatIf MapWhatIf(const Timeline& shown, const std::vector<std::vector<std::uint32_t>>& original, const Bottleneck& b) {
  ShownWhatIf out;
  out.title = WhatIfTitle(&b);
  const WhatIfRun& run = *b.drawn_what_if;
  Nanos measured_first = std::numeric_limits<Nanos>::max(), replayed_first = measured_first;
  size_t w = 0;
  for (const Machine& machine : shown.machines)
    for (const Worker& worker : machine.workers) {
      std::vector<std::pair<Nanos, Nanos>>& times = out.times.emplace_back(worker.jobs.size(), std::pair<Nanos, Nanos>{-1, -1});
      if (w < run.jobs.size())
        for (const ReplayedJob& job : run.jobs[w]) {
          const auto k = ShownIndex(original, w, job.job);
          if (!k) continue;  // outside the window
          times[*k] = {job.start, job.end};
          measured_first = std::min(measured_first, worker.jobs[*k].start);
          replayed_first = std::min(replayed_first, job.start);
        }
      ++w;
    }
  // A window of later steps: the replay of the whole run has them earlier by what the steps before saved.
  const Nanos shift = measured_first == std::numeric_limits<Nanos>::max() ? 0 : measured_first - replayed_first;
  for (auto& worker : out.times)
    for (auto& [start, end] : worker)
      if (start >= 0) start += shift, end += shift;
  out.steps = ReplayedSteps(shown, out);
  return out;
}

}  // namespace jobviz
