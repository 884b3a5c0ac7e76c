#include "emit/flow_chains.h"

#include <stdexcept>

#include "align/pipeline_order.h"

namespace jobviz {

FlowChains::FlowChains(const Timeline& timeline, bool keep_order) : keep_order_(keep_order) {
  // Hand-offs come stage pair by stage pair, so the worker is usually the
  // one before: looked up in the map only when it changes.
  struct Last {
    const Worker* worker = nullptr;
    std::uint32_t index = 0;
  } last_sender, last_receiver;
  auto index_of = [&](const Worker* worker, Last& last) -> std::uint32_t {
    if (worker != last.worker) {
      auto [it, inserted] = index_.try_emplace(worker, static_cast<std::uint32_t>(workers_.size()));
      if (inserted) workers_.push_back({worker, std::vector<FlowMark>(worker->jobs.size())});
      last = {worker, it->second};
    }
    return last.index;
  };
  // At most every job once, as nearly every job is at scale: no regrowth.
  size_t jobs = 0;
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers) jobs += worker.jobs.size();
  if (keep_order) links_.reserve(jobs);
  std::uint32_t next_id = 0;
  const auto link = [&](const HandOff& h) {
    const FlowLink from{index_of(h.sender_worker, last_sender), static_cast<std::uint32_t>(h.sender - h.sender_worker->jobs.data())};
    const FlowLink to{index_of(h.receiver_worker, last_receiver),
                      static_cast<std::uint32_t>(h.receiver - h.receiver_worker->jobs.data())};
    FlowMark& sender = workers_[from.worker].marks[from.job];
    if (sender.id == 0) {
      // A chain has two jobs at least: a billion chains are 96 GB of jobs.
      if (next_id == FlowMark::kMaxId) throw std::length_error("more than a billion hand-off chains");
      sender.id = ++next_id;
      if (keep_order_) links_.push_back(from);
    }
    sender.out = true;
    FlowMark& receiver = workers_[to.worker].marks[to.job];
    if (!receiver.in && keep_order_) links_.push_back(to);
    receiver.id = sender.id;
    receiver.in = true;
    ++hand_offs_;
  };
  // A chain grows from its first sender: forward hand-offs are walked from
  // stage 0 up, backward ones from the last stage down, each linked as it
  // comes (nothing is kept but the marks and the order).
  ForEachHandOff(timeline, link, {.forward = true, .backward = false, .last_stage_first = false});
  ForEachHandOff(timeline, link, {.forward = false, .backward = true, .last_stage_first = true});
}

std::shared_future<FlowChains> PairFlowsAside(const Timeline& timeline, bool keep_order) {
  return std::async(std::launch::async, [&timeline, keep_order] { return FlowChains(timeline, keep_order); }).share();
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
