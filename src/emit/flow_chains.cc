#include "emit/flow_chains.h"

#include <algorithm>

#include "align/pipeline_order.h"

namespace jobviz {

namespace {

struct Link {
  const Worker* sender_worker;
  const Worker* receiver_worker;
  std::uint32_t sender, receiver;  // job indices
  int stage;
};

}  // namespace

FlowChains::FlowChains(const Timeline& timeline) {
  auto marks_of = [&](const Worker* worker) -> std::vector<FlowMark>& {
    auto [it, inserted] = marks_.try_emplace(worker);
    if (inserted) it->second.resize(worker->jobs.size());
    return it->second;
  };
  std::uint32_t next_id = 0;
  auto link = [&](const Worker* sender_worker, size_t sender_job, const Worker* receiver_worker, size_t receiver_job) {
    FlowMark& sender = marks_of(sender_worker)[sender_job];
    if (sender.id == 0) sender.id = ++next_id;
    sender.out = true;
    FlowMark& receiver = marks_of(receiver_worker)[receiver_job];
    receiver.id = sender.id;
    receiver.in = true;
    ++hand_offs_;
  };
  // A chain grows from its first sender: forward hand-offs come stage 0 -> 1
  // first and are linked as they come; backward ones are walked from the
  // last stage down once all are known.
  std::vector<Link> backward;
  size_t backward_jobs = 0;  // at most one hand-off leaves each: room for all, no doubling
  for (const Machine& machine : timeline.machines)
    for (const Worker& worker : machine.workers)
      for (const Job& job : worker.jobs) backward_jobs += DirectionOf(job.type) == Direction::kBackward;
  backward.reserve(backward_jobs);
  ForEachHandOff(timeline, [&](const HandOff& h) {
    const size_t sender = static_cast<size_t>(h.sender - h.sender_worker->jobs.data());
    const size_t receiver = static_cast<size_t>(h.receiver - h.receiver_worker->jobs.data());
    if (DirectionOf(h.sender->type) == Direction::kForward)
      link(h.sender_worker, sender, h.receiver_worker, receiver);
    else
      backward.push_back({h.sender_worker, h.receiver_worker, static_cast<std::uint32_t>(sender),
                          static_cast<std::uint32_t>(receiver), h.stage});
  });
  std::stable_sort(backward.begin(), backward.end(), [](const Link& a, const Link& b) { return a.stage > b.stage; });
  for (const Link& l : backward) link(l.sender_worker, l.sender, l.receiver_worker, l.receiver);
}

FlowMark FlowChains::Of(const Worker& worker, size_t job) const {
  const auto it = marks_.find(&worker);
  return it == marks_.end() ? FlowMark{} : it->second[job];
}

}  // namespace jobviz
