#include "commands/printed_steps.h"

#include <algorithm>
#include <map>

#include "read/parallel_for.h"

namespace jobviz {

size_t PrintedSteps::FirstNew(const std::vector<StepSpan>& steps, size_t finished) const {
  size_t first = 0;
  while (first < finished && any() && steps[first].step <= last_step_ && steps[first].start < last_end_) ++first;
  return first;
}

void PrintedSteps::Add(const StepSpan& span, FirstLineOf first_lines) {
  ++count_;
  last_step_ = span.step;
  last_end_ = span.end;
  durations_.push_back(span.end - span.start);
  if (durations_.size() > kMedianOf) durations_.pop_front();
  kept_.emplace_back(span.step, std::move(first_lines));
  moved_ = false;
}

double PrintedSteps::MedianSeconds() const {
  std::vector<Nanos> d(durations_.begin(), durations_.end());
  if (d.empty()) return 0;
  std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2), d.end());
  return static_cast<double>(d[d.size() / 2]) / 1e9;
}

StepRange PrintedSteps::Shown(size_t keep_steps) const {
  StepRange range{kNoStep, last_step_};
  if (keep_steps > 0 && !kept_.empty()) range.first = kept_[kept_.size() > keep_steps ? kept_.size() - keep_steps : 0].first;
  return range;
}

// `act` on each log named, side by side (a drop copies what a log keeps).
void PrintedSteps::EachLog(FollowedSource& source, const FirstLineOf& lines, int threads,
                           const std::function<void(FollowedRecords&, std::uint64_t)>& act) const {
  const std::map<std::string, size_t> index = source.IndexByName();
  ParallelFor(lines.size(), threads, [&](size_t i) {
    if (const auto it = index.find(lines[i].first); it != index.end()) act(source.log(it->second), lines[i].second);
  });
}

void PrintedSteps::MoveCursors(FollowedSource& source, size_t keep_steps, int threads) {
  if (moved_ || kept_.empty()) return;
  moved_ = true;
  const std::int64_t cursor_step = StepNumber(kept_.back().first);
  EachLog(source, kept_.back().second, threads, [&](FollowedRecords& log, std::uint64_t line) { log.SetCursor(line, cursor_step); });
  if (keep_steps == 0) {
    while (kept_.size() > 1) kept_.pop_front();
    return;
  }
  if (kept_.size() <= 2 * keep_steps) return;
  while (kept_.size() > keep_steps) kept_.pop_front();
  const std::int64_t first_kept = StepNumber(kept_.front().first);
  EachLog(source, kept_.front().second, threads, [&](FollowedRecords& log, std::uint64_t line) { log.DropBefore(line, first_kept); });
}

}  // namespace jobviz
