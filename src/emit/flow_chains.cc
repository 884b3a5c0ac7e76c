#include "emit/flow_chains.h"

#include <algorithm>

#include "align/pipeline_order.h"

namespace jobviz {

namespace {

struct Link {
  const Worker* sender_worker;
  size_t sender;
  const Worker* receiver_worker;
  size_t receiver;
  int order;  // forward pairs by stage upwards, then backward pairs downwards
};

}  // namespace

FlowChains::FlowChains(const Timeline& timeline) {
  std::vector<Link> links;
  ForEachHandOff(timeline, [&](const HandOff& h) {
    const bool forward = DirectionOf(h.sender->type) == Direction::kForward;
    links.push_back({h.sender_worker, static_cast<size_t>(h.sender - h.sender_worker->jobs.data()),
                     h.receiver_worker, static_cast<size_t>(h.receiver - h.receiver_worker->jobs.data()),
                     forward ? h.stage : (1 << 30) - h.stage});
  });
  // A chain grows from its first sender: walk each direction from where it starts.
  std::stable_sort(links.begin(), links.end(), [](const Link& a, const Link& b) { return a.order < b.order; });
  auto marks_of = [&](const Worker* worker) -> std::vector<FlowMark>& {
    auto [it, inserted] = marks_.try_emplace(worker);
    if (inserted) it->second.resize(worker->jobs.size());
    return it->second;
  };
  std::uint32_t next_id = 0;
  for (const Link& link : links) {
    FlowMark& sender = marks_of(link.sender_worker)[link.sender];
    if (sender.id == 0) sender.id = ++next_id;
    sender.out = true;
    FlowMark& receiver = marks_of(link.receiver_worker)[link.receiver];
    receiver.id = sender.id;
    receiver.in = true;
  }
  hand_offs_ = links.size();
}

FlowMark FlowChains::Of(const Worker& worker, size_t job) const {
  const auto it = marks_.find(&worker);
  return it == marks_.end() ? FlowMark{} : it->second[job];
}

}  // namespace jobviz
