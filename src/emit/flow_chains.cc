#include "emit/flow_chains.h"

#include <stdexcept>

#include "align/pipeline_order.h"

namespace jobviz {

std::uint32_t FlowChains::IndexFor(const Worker& worker) {
  auto [it, inserted] = index_.try_emplace(&worker, static_cast<std::uint32_t>(workers_.size()));
  if (inserted) workers_.push_back({&worker, std::vector<FlowMark>(worker.jobs.size())});
  return it->second;
}

FlowChains::FlowChains(const Timeline& timeline) {
  std::uint32_t next_id = 0;
  // One walk, stage pairs from the first up, both directions at once. A
  // chain takes its id on its job of the lowest stage, which that walk meets
  // first and then hands up the chain: a forward chain's sender there, a
  // backward chain's last receiver. A stage pair at a time: its two
  // workers' marks are looked up once, not once a hand-off.
  for (const PipelineChain& chain : PipelineChains(timeline))
    ForEachStagePairing(chain, [&](const StagePairing& pairing) {
      FlowMark* lower_marks = nullptr;  // looked up at the pair's first hand-off
      FlowMark* upper_marks = nullptr;
      for (size_t i = 0; i < pairing.partners.size(); ++i) {
        const StagePairing::Partner& partner = pairing.partners[i];
        if (!partner.job) continue;
        if (!lower_marks) {
          const std::uint32_t lower_index = IndexFor(*pairing.lower), upper_index = IndexFor(*pairing.upper);
          lower_marks = workers_[lower_index].marks.data();
          upper_marks = workers_[upper_index].marks.data();
        }
        FlowMark& lower = lower_marks[i];
        FlowMark& upper = upper_marks[partner.job - pairing.upper->jobs.data()];
        if (lower.id == 0) {
          // A chain has two jobs at least: half a billion chains are 48 GB of jobs.
          if (next_id == FlowMark::kMaxId) throw std::length_error("more than half a billion hand-off chains");
          lower.id = ++next_id;
        }
        upper.id = lower.id;
        (partner.forward ? lower : upper).out = true;
        (partner.forward ? upper : lower).in = true;
        lower.backward = upper.backward = !partner.forward;
        ++hand_offs_;
      }
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
