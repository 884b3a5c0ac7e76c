#include "emit/flow_chains.h"

#include <stdexcept>

#include "align/pipeline_order.h"

namespace jobviz {

FlowChains::FlowChains(const Timeline& timeline) {
  // Hand-offs come stage pair by stage pair, so the worker on each side is
  // usually the one before: looked up in the map only when it changes.
  struct Last {
    const Worker* worker = nullptr;
    std::uint32_t index = 0;
  } last_lower, last_upper;
  auto mark_of = [&](const Worker* worker, const Job* job, Last& last) -> FlowMark& {
    if (worker != last.worker) {
      auto [it, inserted] = index_.try_emplace(worker, static_cast<std::uint32_t>(workers_.size()));
      if (inserted) workers_.push_back({worker, std::vector<FlowMark>(worker->jobs.size())});
      last = {worker, it->second};
    }
    return workers_[last.index].marks[static_cast<size_t>(job - worker->jobs.data())];
  };
  std::uint32_t next_id = 0;
  // One walk, stage pairs from the first up, both directions at once. A
  // chain takes its id on its job of the lowest stage, which that walk meets
  // first and then hands up the chain: a forward chain's sender there, a
  // backward chain's last receiver.
  ForEachHandOff(timeline, [&](const HandOff& h) {
    FlowMark& sender = mark_of(h.sender_worker, h.sender, h.forward ? last_lower : last_upper);
    FlowMark& receiver = mark_of(h.receiver_worker, h.receiver, h.forward ? last_upper : last_lower);
    FlowMark& lower = h.forward ? sender : receiver;
    if (lower.id == 0) {
      // A chain has two jobs at least: half a billion chains are 48 GB of jobs.
      if (next_id == FlowMark::kMaxId) throw std::length_error("more than half a billion hand-off chains");
      lower.id = ++next_id;
    }
    (h.forward ? receiver : sender).id = lower.id;
    sender.out = true;
    receiver.in = true;
    sender.backward = receiver.backward = !h.forward;
    ++hand_offs_;
  }, {.forward = true, .backward = true, .last_stage_first = false});
}

std::shared_future<FlowChains> PairFlowsAside(const Timeline& timeline) {
  return std::async(std::launch::async, [&timeline] { return FlowChains(timeline); }).share();
}

std::shared_future<FlowChains> PairFlowsNow(const Timeline& timeline) {
  std::promise<FlowChains> paired;
  paired.set_value(FlowChains(timeline));
  return paired.get_future().share();
}

std::span<const FlowMark> FlowChains::MarksOf(const Worker& worker) const {
  const auto it = index_.find(&worker);
  if (it == index_.end()) return {};
  return workers_[it->second].marks;
}

}  // namespace jobviz
