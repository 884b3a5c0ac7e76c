#include "model/step_window.h"

#include <algorithm>
#include <charconv>

namespace jobviz {

namespace {

bool ParseStep(std::string_view text, std::int64_t* step) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *step);
  return ec == std::errc() && end == text.data() + text.size() && *step >= 0;
}

}  // namespace

std::optional<StepRange> ParseStepRange(const std::string& text, std::string* error) {
  StepRange range;
  const size_t colon = text.find(':');
  const std::string_view first = std::string_view(text).substr(0, colon);
  const std::string_view last = colon == std::string::npos ? first : std::string_view(text).substr(colon + 1);
  const bool ok = (!first.empty() || !last.empty()) && (first.empty() || ParseStep(first, &range.first)) &&
                  (last.empty() || ParseStep(last, &range.last));
  if (!ok || range.first > range.last) {
    *error = "'" + text + "': expected FIRST:LAST steps (both included), FIRST:, :LAST or one step, e.g. 3:5";
    return std::nullopt;
  }
  return range;
}

bool KeepSteps(const StepRange& range, Timeline& timeline, std::string* error, size_t* outside_steps) {
  if (timeline.steps.empty()) {
    *error = "no step boundaries were found in these logs, so there is no step to cut out";
    return false;
  }
  const std::int64_t had_first = timeline.steps.front().step, had_last = timeline.steps.back().step;
  // Under --run all, steps A to B of every run.
  auto outside = [&](const StepSpan& s) { return !range.Contains(StepNumber(s.step)); };
  timeline.steps.erase(std::remove_if(timeline.steps.begin(), timeline.steps.end(), outside), timeline.steps.end());
  size_t kept = 0, in_no_step = 0;
  for (Machine& machine : timeline.machines)
    for (Worker& worker : machine.workers) {
      std::erase_if(worker.jobs, [&](const Job& job) {
        in_no_step += job.step == kNoStep;
        return job.step == kNoStep || !range.Contains(StepNumber(job.step));
      });
      std::erase_if(worker.steps, outside);
      kept += worker.jobs.size();
    }
  if (outside_steps) *outside_steps = in_no_step;
  if (kept == 0) {
    *error = "no job in the steps asked for: the logs have " + StepName(had_first) + " to " + StepName(had_last);
    return false;
  }
  return true;
}

Timeline TimelineFrame(const Timeline& timeline) {
  Timeline frame;
  frame.stage_order = timeline.stage_order;
  frame.topology = timeline.topology;
  frame.rows_by_stage = timeline.rows_by_stage;
  frame.step_source = timeline.step_source;
  frame.step_warnings = timeline.step_warnings;
  for (const Machine& machine : timeline.machines) {
    Machine& to = frame.machines.emplace_back(machine.name);
    to.clock_method = machine.clock_method;
    to.clock_offset = machine.clock_offset;
    to.clock_drift_ppm = machine.clock_drift_ppm;
    for (const Worker& worker : machine.workers) {
      Worker& w = to.workers.emplace_back();
      w.machine = worker.machine;
      w.index = worker.index;
      w.file = worker.file;
      w.role = worker.role;
    }
  }
  return frame;
}

std::vector<StepSlice> SliceSteps(const Timeline& timeline, size_t first, size_t last) {
  last = std::min(last, timeline.steps.size());
  if (first >= last) return {};
  // Step number -> its slice, sorted: a handful of steps, looked up per job.
  std::vector<std::pair<std::int64_t, size_t>> slot;
  std::vector<StepSlice> slices;
  const Timeline frame = TimelineFrame(timeline);
  for (size_t s = first; s < last; ++s) {
    slot.emplace_back(timeline.steps[s].step, slices.size());
    slices.push_back({frame, {}});
    slices.back().one.steps.push_back(timeline.steps[s]);
  }
  // A step number seen twice (in a drawn run, it is not) fills its first slice.
  std::stable_sort(slot.begin(), slot.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  slot.erase(std::unique(slot.begin(), slot.end(), [](const auto& a, const auto& b) { return a.first == b.first; }), slot.end());
  std::vector<std::uint64_t> first_line(slices.size());
  for (size_t m = 0; m < timeline.machines.size(); ++m)
    for (size_t w = 0; w < timeline.machines[m].workers.size(); ++w) {
      const Worker& worker = timeline.machines[m].workers[w];
      std::fill(first_line.begin(), first_line.end(), UINT64_MAX);
      for (const Job& job : worker.jobs) {
        const auto it = std::lower_bound(slot.begin(), slot.end(), job.step,
                                         [](const auto& entry, std::int64_t step) { return entry.first < step; });
        if (it == slot.end() || it->first != job.step) continue;
        slices[it->second].one.machines[m].workers[w].jobs.push_back(job);
        first_line[it->second] = std::min<std::uint64_t>(first_line[it->second], job.line);
      }
      for (size_t i = 0; i < slices.size(); ++i)
        if (first_line[i] != UINT64_MAX) slices[i].first_lines.emplace_back(worker.file, first_line[i]);
    }
  return slices;
}

Timeline CopyJobsWhere(const Timeline& timeline, const std::function<bool(const Job&)>& keep) {
  Timeline copy = TimelineFrame(timeline);
  std::vector<std::int64_t> kept_steps;
  for (size_t m = 0; m < timeline.machines.size(); ++m)
    for (size_t i = 0; i < timeline.machines[m].workers.size(); ++i) {
      const Worker& worker = timeline.machines[m].workers[i];
      Worker& w = copy.machines[m].workers[i];
      w.markers = worker.markers;
      for (const Job& job : worker.jobs)
        if (keep(job)) {
          w.jobs.push_back(job);
          if (job.step != kNoStep && (kept_steps.empty() || kept_steps.back() != job.step)) kept_steps.push_back(job.step);
        }
    }
  std::sort(kept_steps.begin(), kept_steps.end());
  kept_steps.erase(std::unique(kept_steps.begin(), kept_steps.end()), kept_steps.end());
  auto kept = [&](const StepSpan& step) { return std::binary_search(kept_steps.begin(), kept_steps.end(), step.step); };
  for (size_t m = 0; m < timeline.machines.size(); ++m)
    for (size_t w = 0; w < timeline.machines[m].workers.size(); ++w)
      for (const StepSpan& step : timeline.machines[m].workers[w].steps)
        if (kept(step)) copy.machines[m].workers[w].steps.push_back(step);
  for (const StepSpan& step : timeline.steps)
    if (kept(step)) copy.steps.push_back(step);
  return copy;
}

}  // namespace jobviz
