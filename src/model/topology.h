// Where each worker sits in a hybrid-parallel job: its pipeline stage, the
// tensor-parallel peers that run that stage with it, and the replica (data
// parallel or sharding) whose pipeline it belongs to. Everything structural
// (hand-offs, pipeline order, the schedule, flow arrows) follows pipelines
// built from this, not machine-then-worker order (docs/analysis.md,
// "Hybrid parallelism").
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace jobviz {

// The parallel dimensions as Paddle's fleet names them, in Paddle's rank
// order (HybridCommunicateGroup: data outermost, model innermost).
enum class ParallelAxis : std::uint8_t { kDp, kPp, kSharding, kSep, kMp, kCount };
inline constexpr size_t kAxes = static_cast<size_t>(ParallelAxis::kCount);
using AxisValues = std::array<std::int32_t, kAxes>;

// "dp", "pp", "sharding", "sep", "mp".
const char* AxisName(ParallelAxis axis);

// One rank's coordinates along every axis, and the degrees its source
// states (0: not stated; the largest coordinate + 1 is used then).
struct ParallelPlace {
  AxisValues index{};
  AxisValues degree{};
  std::int32_t at(ParallelAxis axis) const { return index[static_cast<size_t>(axis)]; }
  bool operator==(const ParallelPlace&) const = default;
};

// A worker's role, derived from its place: -1 stage when unknown.
struct WorkerRole {
  std::int64_t rank = -1;  // global rank, -1 when unknown
  int stage = -1;          // pipeline stage (pp rank)
  int peer = 0;            // index among the stage's tensor-parallel peers (mp, with sep folded in)
  int replica = 0;         // which pipeline replica (dp x sharding)
  bool known() const { return stage >= 0; }
  bool operator==(const WorkerRole&) const = default;
};

// Stage, peer and replica from a place, given the degrees of the whole job.
WorkerRole RoleOf(const ParallelPlace& place, const AxisValues& degrees, std::int64_t rank);

// Where the roles came from, in the order they are tried.
enum class TopologySource { kNone, kOption, kStageOrder, kHybridInfo, kShimLines, kInferred };

// "--topology", "HybridParallelInfo lines", ...
const char* TopologySourceText(TopologySource source);

struct Topology {
  TopologySource source = TopologySource::kNone;
  AxisValues degrees{1, 1, 1, 1, 1};
  std::string detail;  // what an inference rests on, how sure it is
  int degree(ParallelAxis axis) const { return degrees[static_cast<size_t>(axis)]; }
  int pipeline_degree() const { return degree(ParallelAxis::kPp); }
  int peer_degree() const { return degree(ParallelAxis::kMp) * degree(ParallelAxis::kSep); }
  int replicas() const { return degree(ParallelAxis::kDp) * degree(ParallelAxis::kSharding); }
  bool hybrid() const { return source != TopologySource::kNone && source != TopologySource::kStageOrder; }
};

// "pp4 × mp2 × sharding4": the degrees above 1, pipeline first; "pp1" when none.
std::string DescribeDegrees(const AxisValues& degrees);

// A hybrid topology in words, as the report and the summary say it:
// "pp4 × mp2 × sharding4 from HybridParallelInfo lines (4 replicas, 8
// pipelines of 4 stages)", and ": " + its detail when it has one.
std::string DescribeTopology(const Topology& topology);

// "pp=4,mp=2,sharding=4,dp=1" -> degrees (unnamed axes 1). Axis names are
// dp, pp, sharding, sep, mp (tp is mp).
bool ParseDegrees(const std::string& text, AxisValues* degrees, std::string* error);

// "dp,pp,sharding,sep,mp" (outermost first) -> the axes in that order; every
// axis named at most once, the unnamed ones innermost in Paddle's order.
bool ParseRankOrder(const std::string& text, std::vector<ParallelAxis>* order, std::string* error);
std::vector<ParallelAxis> PaddleRankOrder();

// A global rank's place when ranks are laid out along `order` (outermost
// first) with `degrees`.
ParallelPlace PlaceOfRank(std::int64_t rank, const AxisValues& degrees, const std::vector<ParallelAxis>& order);

std::int64_t RankCount(const AxisValues& degrees);

// The fewest ranks a job holding `place` has: the product over the axes of
// the stated degree or the coordinate + 1, whichever is larger (saturating
// far above kMaxRanks).
std::int64_t RanksNeeded(const ParallelPlace& place);

// The most ranks a job jobviz places may have (ten times the largest runs
// known): degrees, coordinates, rank ids and their products are checked
// against it where they are read, so no role or count can wrap.
inline constexpr std::int64_t kMaxRanks = 10'000'000;

}  // namespace jobviz
