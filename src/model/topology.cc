#include "model/topology.h"

#include <algorithm>
#include <charconv>
#include <string_view>

namespace jobviz {

namespace {

constexpr std::array<const char*, kAxes> kAxisNames = {"dp", "pp", "sharding", "sep", "mp"};

bool AxisFromName(std::string_view name, ParallelAxis* axis) {
  if (name == "tp") name = "mp";  // Megatron's word for the same thing
  for (size_t a = 0; a < kAxes; ++a)
    if (name == kAxisNames[a]) {
      *axis = static_cast<ParallelAxis>(a);
      return true;
    }
  return false;
}

std::vector<std::string_view> SplitCommas(std::string_view text) {
  std::vector<std::string_view> parts;
  while (true) {
    const size_t comma = text.find(',');
    parts.push_back(text.substr(0, comma));
    if (comma == std::string_view::npos) return parts;
    text.remove_prefix(comma + 1);
  }
}

}  // namespace

const char* AxisName(ParallelAxis axis) { return kAxisNames[static_cast<size_t>(axis)]; }

WorkerRole RoleOf(const ParallelPlace& place, const AxisValues& degrees, std::int64_t rank) {
  WorkerRole role;
  role.rank = rank;
  role.stage = place.at(ParallelAxis::kPp);
  role.peer = place.at(ParallelAxis::kSep) * degrees[static_cast<size_t>(ParallelAxis::kMp)] + place.at(ParallelAxis::kMp);
  role.replica = place.at(ParallelAxis::kDp) * degrees[static_cast<size_t>(ParallelAxis::kSharding)] +
                 place.at(ParallelAxis::kSharding);
  return role;
}

const char* TopologySourceText(TopologySource source) {
  switch (source) {
    case TopologySource::kNone: return "none";
    case TopologySource::kOption: return "--topology";
    case TopologySource::kStageOrder: return "--stage_order";
    case TopologySource::kHybridInfo: return "HybridParallelInfo lines";
    case TopologySource::kShimLines: return "jobviz topology lines";
    case TopologySource::kInferred: return "inferred from the jobs";
  }
  return "?";
}

std::string DescribeDegrees(const AxisValues& degrees) {
  // Pipeline first, then what splits a stage, then the replicas.
  constexpr std::array<ParallelAxis, kAxes> shown = {ParallelAxis::kPp, ParallelAxis::kMp, ParallelAxis::kSep,
                                                     ParallelAxis::kSharding, ParallelAxis::kDp};
  std::string text;
  for (const ParallelAxis axis : shown) {
    const int degree = degrees[static_cast<size_t>(axis)];
    if (degree <= 1 && !(axis == ParallelAxis::kPp)) continue;
    text += (text.empty() ? "" : " × ") + std::string(AxisName(axis)) + std::to_string(degree);
  }
  return text;
}

std::string DescribeTopology(const Topology& t) {
  const auto count = [](int n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); };
  std::string text = DescribeDegrees(t.degrees) + (t.source == TopologySource::kInferred ? " " : " from ") +
                     TopologySourceText(t.source) + " (" + count(t.replicas(), "replica", "replicas") + ", " +
                     count(t.replicas() * t.peer_degree(), "pipeline", "pipelines") + " of " +
                     std::to_string(t.pipeline_degree()) + " stages)";
  return t.detail.empty() ? text : text + ": " + t.detail;
}

bool ParseDegrees(const std::string& text, AxisValues* degrees, std::string* error) {
  degrees->fill(1);
  AxisValues seen{};
  for (const std::string_view part : SplitCommas(text)) {
    const size_t equals = part.find('=');
    ParallelAxis axis;
    if (equals == std::string_view::npos || !AxisFromName(part.substr(0, equals), &axis)) {
      *error = "'" + std::string(part) + "' is not AXIS=DEGREE with AXIS one of pp, mp (or tp), sharding, dp, sep";
      return false;
    }
    const std::string_view digits = part.substr(equals + 1);
    int degree = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), degree);
    if (ec != std::errc() || end != digits.data() + digits.size() || degree < 1 || degree > 1'000'000) {
      *error = "'" + std::string(part) + "': a degree is a whole number from 1";
      return false;
    }
    const size_t a = static_cast<size_t>(axis);
    if (seen[a]++) {
      *error = std::string(AxisName(axis)) + " is given twice";
      return false;
    }
    (*degrees)[a] = degree;
  }
  if (RankCount(*degrees) > kMaxRanks) {
    *error = "the degrees multiply to more than 10,000,000 ranks";
    return false;
  }
  return true;
}

std::vector<ParallelAxis> PaddleRankOrder() {
  return {ParallelAxis::kDp, ParallelAxis::kPp, ParallelAxis::kSharding, ParallelAxis::kSep, ParallelAxis::kMp};
}

bool ParseRankOrder(const std::string& text, std::vector<ParallelAxis>* order, std::string* error) {
  order->clear();
  for (const std::string_view part : SplitCommas(text)) {
    ParallelAxis axis;
    if (!AxisFromName(part, &axis)) {
      *error = "'" + std::string(part) + "' is not one of dp, pp, sharding, sep, mp (or tp)";
      return false;
    }
    if (std::find(order->begin(), order->end(), axis) != order->end()) {
      *error = std::string(AxisName(axis)) + " is named twice";
      return false;
    }
    order->push_back(axis);
  }
  for (const ParallelAxis axis : PaddleRankOrder())  // the rest innermost, in Paddle's order
    if (std::find(order->begin(), order->end(), axis) == order->end()) order->push_back(axis);
  return true;
}

ParallelPlace PlaceOfRank(std::int64_t rank, const AxisValues& degrees, const std::vector<ParallelAxis>& order) {
  ParallelPlace place;
  place.degree = degrees;
  for (auto axis = order.rbegin(); axis != order.rend(); ++axis) {  // innermost first
    const size_t a = static_cast<size_t>(*axis);
    place.index[a] = static_cast<std::int32_t>(rank % degrees[a]);
    rank /= degrees[a];
  }
  return place;
}

std::int64_t RankCount(const AxisValues& degrees) {
  // Saturates far above any real job (each degree is at most 10^6).
  std::int64_t count = 1;
  for (const std::int32_t degree : degrees) count = std::min<std::int64_t>(count * std::max<std::int32_t>(degree, 1), 1'000'000'000'000);
  return count;
}

std::int64_t RanksNeeded(const ParallelPlace& place) {
  AxisValues widths{};
  for (size_t a = 0; a < kAxes; ++a) widths[a] = std::max(place.degree[a], place.index[a] + 1);
  return RankCount(widths);
}

}  // namespace jobviz
