// The hand-off arrows of the traces as chains: a micro-batch's forward runs
// stage 0 -> 1 -> ... and its backward the other way, so each chain is one
// flow id that every job on it carries. A job then needs at most one id,
// which both trace formats bind to the job itself (Perfetto JSON flow v2
// "bind_id" with flow_in/flow_out; protobuf TrackEvent flow_ids /
// terminating_flow_ids), never to "whatever slice is open at time T".
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "model/model.h"

namespace jobviz {

// 4 bytes, one for each job of the run while the traces are written.
struct FlowMark {
  static constexpr std::uint32_t kMaxId = (1u << 30) - 1;
  std::uint32_t id : 30 = 0;  // 0: the job is on no chain
  std::uint32_t in : 1 = 0;   // a hand-off arrives at this job
  std::uint32_t out : 1 = 0;  // one leaves it
};
static_assert(sizeof(FlowMark) == 4);

class FlowChains {
 public:
  explicit FlowChains(const Timeline& timeline);
  // The marks of all of `worker`'s jobs, by index; empty when none of its
  // jobs is on a chain (writers look a worker up once, not once a job).
  std::span<const FlowMark> MarksOf(const Worker& worker) const;
  size_t hand_offs() const { return hand_offs_; }

 private:
  std::unordered_map<const Worker*, std::vector<FlowMark>> marks_;
  size_t hand_offs_ = 0;
};

}  // namespace jobviz
