// The hand-off arrows of the traces as chains: a micro-batch's forward runs
// stage 0 -> 1 -> ... and its backward the other way, so each chain is one
// flow id that every job on it carries. A job then needs at most one id.
// The protobuf trace binds it to the job itself (TrackEvent flow_ids /
// terminating_flow_ids); the JSON trace writes one flow event per job on a
// chain (flow v1 "s", "t", "f"), in chain order, which Perfetto and Chrome
// DevTools both bind to that job (perfetto_json.cc says how).
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
  static constexpr std::uint32_t kMaxId = (1u << 30) - 1;
  std::uint32_t id : 30 = 0;  // 0: the job is on no chain
  std::uint32_t in : 1 = 0;   // a hand-off arrives at this job
  std::uint32_t out : 1 = 0;  // one leaves it
};
static_assert(sizeof(FlowMark) == 4);

// A job on a chain: its worker (FlowChains' own numbering) and its index
// in the worker's jobs. 8 bytes: at 2,048 stages nearly every job is on one.
struct FlowLink {
  std::uint32_t worker = 0;
  std::uint32_t job = 0;
};

class FlowChains {
 public:
  // `keep_order` false: links() stays empty (the protobuf trace binds its
  // arrows by the marks alone; the order is 8 bytes a job).
  explicit FlowChains(const Timeline& timeline, bool keep_order = true);
  // The marks of all of `worker`'s jobs, by index; empty when none of its
  // jobs is on a chain (writers look a worker up once, not once a job).
  std::span<const FlowMark> MarksOf(const Worker& worker) const;
  size_t hand_offs() const { return hand_offs_; }
  // Every job on a chain once, each chain's jobs in its order (from its
  // first sender), chains interleaved as the stages are walked.
  std::span<const FlowLink> links() const { return links_; }
  bool has_order() const { return keep_order_; }
  const Worker& WorkerOf(FlowLink link) const { return *workers_[link.worker].worker; }
  // The workers with a job on a chain, by FlowLink::worker.
  size_t worker_count() const { return workers_.size(); }
  const Worker& worker(size_t index) const { return *workers_[index].worker; }
  FlowMark MarkOf(FlowLink link) const { return workers_[link.worker].marks[link.job]; }

 private:
  struct WorkerMarks {
    const Worker* worker = nullptr;
    std::vector<FlowMark> marks;
  };
  std::vector<WorkerMarks> workers_;                     // those with a job on a chain
  std::unordered_map<const Worker*, std::uint32_t> index_;  // into workers_
  std::vector<FlowLink> links_;
  size_t hand_offs_ = 0;
  bool keep_order_ = true;
};

// The chains as FinishedRun::flows holds them: paired on a thread of their
// own (the timeline must outlive it and stay unchanged), or now.
std::shared_future<FlowChains> PairFlowsAside(const Timeline& timeline, bool keep_order = true);
std::shared_future<FlowChains> PairFlowsNow(const Timeline& timeline);

}  // namespace jobviz
