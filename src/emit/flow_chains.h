// The hand-off arrows of the traces as chains: a micro-batch's forward runs
// stage 0 -> 1 -> ... and its backward the other way, so each chain is one
// flow id that every job on it carries. A job then needs at most one id.
// The protobuf trace binds it to the job itself (TrackEvent flow_ids /
// terminating_flow_ids); the JSON trace writes one flow event per job on a
// chain (flow v1 "s", "t", "f"), in chain order, which Perfetto and Chrome
// DevTools both bind to that job (perfetto_json.cc says how). Chain order
// needs nothing kept: a forward chain's jobs come stage by stage up, a
// backward chain's down, so writing each stage's marked jobs in that order
// writes every chain in its own.
#pragma once

#include <cstdint>
#include <future>
#include <span>
#include <unordered_map>
#include <vector>

#include "model/model.h"

namespace jobviz {

// 4 bytes, one for each job of the run while the traces are written.
struct FlowMark {
  static constexpr std::uint32_t kMaxId = (1u << 29) - 1;
  std::uint32_t id : 29 = 0;       // 0: the job is on no chain
  std::uint32_t in : 1 = 0;        // a hand-off arrives at this job
  std::uint32_t out : 1 = 0;       // one leaves it
  std::uint32_t backward : 1 = 0;  // on a backward chain (last stage first), else a forward one
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
  struct WorkerMarks {
    const Worker* worker = nullptr;
    std::vector<FlowMark> marks;
  };
  std::uint32_t IndexFor(const Worker& worker);  // into workers_; its marks made on first use
  std::vector<WorkerMarks> workers_;                     // those with a job on a chain
  std::unordered_map<const Worker*, std::uint32_t> index_;  // into workers_
  size_t hand_offs_ = 0;
};

// The chains as FinishedRun::flows holds them: paired on a thread of their
// own (the timeline must outlive it and stay unchanged), or now.
std::shared_future<FlowChains> PairFlowsAside(const Timeline& timeline);
std::shared_future<FlowChains> PairFlowsNow(const Timeline& timeline);

}  // namespace jobviz
