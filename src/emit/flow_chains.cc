#include "emit/flow_chains.h"

#include <stdexcept>

#include "align/pipeline_order.h"

namespace jobviz {

FlowChains::FlowChains(const Timeline& timeline) {
  // Hand-offs come stage pair by stage pair, so the worker is usually the
  // one before: looked up in the map only when it changes.
  struct Last {
    const Worker* worker = nullptr;
    std::vector<FlowMark>* marks = nullptr;
  } last_sender, last_receiver;
  auto marks_of = [&](const Worker* worker, Last& last) -> std::vector<FlowMark>& {
    if (worker != last.worker) {
      auto [it, inserted] = marks_.try_emplace(worker);
      if (inserted) it->second.resize(worker->jobs.size());
      last = {worker, &it->second};
    }
    return *last.marks;
  };
  std::uint32_t next_id = 0;
  const auto link = [&](const HandOff& h) {
    const size_t sender_job = static_cast<size_t>(h.sender - h.sender_worker->jobs.data());
    const size_t receiver_job = static_cast<size_t>(h.receiver - h.receiver_worker->jobs.data());
    FlowMark& sender = marks_of(h.sender_worker, last_sender)[sender_job];
    if (sender.id == 0) {
      // A chain has two jobs at least: a billion chains are 96 GB of jobs.
      if (next_id == FlowMark::kMaxId) throw std::length_error("more than a billion hand-off chains");
      sender.id = ++next_id;
    }
    sender.out = true;
    FlowMark& receiver = marks_of(h.receiver_worker, last_receiver)[receiver_job];
    receiver.id = sender.id;
    receiver.in = true;
    ++hand_offs_;
  };
  // A chain grows from its first sender: forward hand-offs are walked from
  // stage 0 up, backward ones from the last stage down, each linked as it
  // comes (nothing is kept but the marks).
  ForEachHandOff(timeline, link, {.forward = true, .backward = false, .last_stage_first = false});
  ForEachHandOff(timeline, link, {.forward = false, .backward = true, .last_stage_first = true});
}

std::span<const FlowMark> FlowChains::MarksOf(const Worker& worker) const {
  const auto it = marks_.find(&worker);
  if (it == marks_.end()) return {};
  return it->second;
}

}  // namespace jobviz
