#include "analyse/step_graph_room.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

#include "model/time_value.h"

namespace jobviz::step_graph_detail {

// Gaps: per link, the median wait of a receiver that was free when the
// sender ended is the link's typical latency; a job's wait is hand-off
// latency up to its latest input's arrival, stall after it (docs/analysis.md).
void ClassifyGaps(const GraphLanes& lanes, Room& room, StepGraph* g) {
  // Links by receiving stage and where the input comes from: the stage
  // before, the stage after, the other end of the pipeline (interleaved
  // wrap-around), or a reduce group (into the job after the passes: the
  // only inputs of such a job).
  const auto link = [&](const StageJob& from, const StageJob& to) {
    const int from_stage = lanes.lanes[from.lane].stage, to_stage = lanes.lanes[to.lane].stage;
    const int kind = !IsPass(to.pass) ? 3 : from_stage == to_stage - 1 ? 0 : from_stage == to_stage + 1 ? 1 : 2;
    return static_cast<size_t>(lanes.stage_rank[to.lane]) * 4 + static_cast<size_t>(kind);
  };
  const size_t links = static_cast<size_t>(lanes.stage_count) * 4;
  // A sample: a job whose latest input ended when its lane was free already;
  // counted per link in one pass, its gap put in its link's bucket in a
  // second (no list of samples: 16 bytes a job of the step, per thread).
  const auto sampled = [&](size_t n) {
    const std::int32_t latest = room.latest[n];
    return latest >= 0 && g->jobs[latest].end >= (g->jobs[n].first_in_lane ? g->start : g->jobs[n - 1].end);
  };
  std::vector<std::uint32_t>& begin = room.link_begin;
  begin.assign(links + 1, 0);
  room.latest.resize(g->jobs.size());
  size_t samples = 0;
  for (size_t n = 0; n < g->jobs.size(); ++n) {
    const StageJob& node = g->jobs[n];
    std::int32_t latest = -1;
    for (std::uint32_t k = 0; k < node.inputs; ++k) {
      const std::int32_t from = g->inputs[node.first_input + k].from;
      if (latest < 0 || g->jobs[from].end > g->jobs[latest].end) latest = from;
    }
    room.latest[n] = latest;
    if (sampled(n)) {
      ++begin[link(g->jobs[latest], node) + 1];
      ++samples;
    }
  }
  // Each link's median (nearest rank).
  for (size_t k = 0; k < links; ++k) begin[k + 1] += begin[k];
  room.gaps.resize(samples);
  room.fill.assign(begin.begin(), begin.end() - 1);
  for (size_t n = 0; n < g->jobs.size(); ++n)
    if (sampled(n)) {
      const StageJob& from = g->jobs[room.latest[n]];
      room.gaps[room.fill[link(from, g->jobs[n])]++] = g->jobs[n].start - from.end;
    }
  room.typical.assign(links, 0);
  for (size_t k = 0; k < links; ++k)
    if (begin[k + 1] > begin[k]) {
      const auto first = room.gaps.begin() + begin[k], last = room.gaps.begin() + begin[k + 1];
      const auto at = first + (last - first - 1) / 2;
      std::nth_element(first, at, last);
      room.typical[k] = *at;
    }
  for (size_t n = 0; n < g->jobs.size(); ++n) {
    StageJob& node = g->jobs[n];
    const bool first = node.first_in_lane;
    const Nanos lane_free = first ? g->start : g->jobs[n - 1].end;
    if (!first && lane_free > node.start + kTimeSlack) ++g->overlaps;
    const std::int32_t latest = room.latest[n];
    if (latest >= 0 && g->jobs[latest].end >= lane_free) {  // the input came last: all of the wait is the hand-off
      const Nanos lag = node.start - g->jobs[latest].end;
      for (std::uint32_t k = 0; k < node.inputs; ++k) {
        GraphInput& in = g->inputs[node.first_input + k];
        in.lag = in.from == latest ? lag : std::min(room.typical[link(g->jobs[in.from], node)], node.start - g->jobs[in.from].end);
      }
      node.binding = latest;
      node.binding_is_input = true;
      continue;
    }
    GraphInput* latest_input = nullptr;
    Nanos arrival = std::numeric_limits<Nanos>::min();
    for (std::uint32_t k = 0; k < node.inputs; ++k) {
      GraphInput& in = g->inputs[node.first_input + k];
      const StageJob& from = g->jobs[in.from];
      in.lag = std::min(room.typical[link(from, node)], node.start - from.end);
      if (from.end + in.lag > arrival) {
        arrival = from.end + in.lag;
        latest_input = &in;
      }
    }
    if (latest_input && arrival > lane_free) {  // the worker was busy past the sender's end, the data later still
      node.binding = latest_input->from;
      node.binding_is_input = true;
      node.wait = node.start - arrival;
      continue;
    }
    if (first) {
      node.wait = node.start - g->start;
      continue;
    }
    node.binding = static_cast<std::int32_t>(n - 1);
    node.wait = std::max<Nanos>(0, node.start - lane_free);
  }
}

}  // namespace jobviz::step_graph_detail
