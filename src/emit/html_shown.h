// The HTML report's page may show a window of the run (html_timeline.h):
// what the analysis found of the whole run, in the shown run's terms. Its
// jobs' indices in the whole run, the critical paths through them, and the
// drawn what-if's times for them and for their steps.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyse/bottleneck.h"
#include "model/model.h"

namespace jobviz {

// Per worker of `timeline` (machine-then-worker order), the indices of the
// jobs `keep` accepts (all without it): the shown run's jobs in the whole run.
std::vector<std::vector<std::uint32_t>> OriginalIndices(const Timeline& timeline, const std::function<bool(const Job&)>& keep);

// A job's index in the shown run (`original`: OriginalIndices), where it
// sits in its worker's sorted original indices; none when the window left it out.
std::optional<std::uint32_t> ShownIndex(const std::vector<std::vector<std::uint32_t>>& original, size_t worker,
                                        std::uint32_t job);

// The critical paths in the shown run's terms: its marked jobs per worker
// and each shown step's path, as (worker, job) of the shown run.
struct ShownPaths {
  std::vector<std::vector<bool>> marked;  // per worker, per job
  std::vector<std::vector<std::pair<size_t, std::uint32_t>>> paths;
};
ShownPaths MapPaths(const Timeline& shown, const std::vector<std::vector<std::uint32_t>>& original, const Bottleneck& b);

// The drawn what-if's times for the shown jobs (per worker of the shown run,
// per job), the first shown step starting where it was measured; jobs the
// replay did not move get none ({-1, -1}). And each shown step's span in the
// replay (Timeline::steps order): its start moved as its earliest moved job's
// start moved, its end as its latest moved job's end, so that the step row
// and the idle background go with the jobs; a step with no moved job stays.
struct ShownWhatIf {
  std::string title;
  std::vector<std::vector<std::pair<Nanos, Nanos>>> times;
  std::vector<std::pair<Nanos, Nanos>> steps;
};
ShownWhatIf MapWhatIf(const Timeline& shown, const std::vector<std::vector<std::uint32_t>>& original, const Bottleneck& b);

}  // namespace jobviz
