#include "analyse/schedule.h"

#include "model/unfinished_steps.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <vector>

#include "align/pipeline_order.h"
#include "analyse/analysis.h"
#include "read/parallel_for.h"

namespace jobviz {

bool IsPass(Name type) {
  thread_local PerName<JobKind, ClassifyJobType> kinds;  // a run has a handful of types
  return kinds.Of(type).pass != Pass::kOther;
}

namespace {

// "forward12" -> chunk 12 after the prefix; "forward" -> -1; else false.
bool ChunkAfter(const std::string& type, std::string_view prefix, int* chunk) {
  if (type.rfind(prefix, 0) != 0) return false;
  const std::string_view rest = std::string_view(type).substr(prefix.size());
  if (rest.empty()) {
    *chunk = -1;
    return true;
  }
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), *chunk);
  return ec == std::errc() && end == rest.data() + rest.size() && *chunk >= 0;
}

// A share of (worker, step) pairs that must agree before an order is named:
// the first and last steps of a profiler window are often cut.
constexpr double kAgreement = 0.9;

struct OrderVotes {
  size_t pairs = 0, fthenb = 0, one_f_one_b = 0, eager = 0;
};

// One worker's votes: per step, the forwards before its first backward.
void VoteOfWorker(const Worker& worker, const UnfinishedStepSet& unfinished, int expect_1f1b, int expect_eager,
                  OrderVotes* votes) {
  PerName<JobKind, ClassifyJobType> kinds;
  std::map<std::int64_t, std::vector<bool>> by_step;  // per step, in start order: forward or backward
  for (const Job& job : worker.jobs) {
    if (unfinished.Contains(job.step)) continue;
    const Pass pass = kinds.Of(job.type).pass;
    if (pass == Pass::kForward || pass == Pass::kBackward) by_step[job.step].push_back(pass == Pass::kForward);
  }
  for (const auto& [step, passes] : by_step) {
    int before = 0, forwards = 0;
    bool seen_backward = false, forward_after_backward = false;
    for (const bool forward : passes) {
      forwards += forward;
      if (forward && !seen_backward) ++before;
      if (forward && seen_backward) forward_after_backward = true;
      seen_backward |= !forward;
    }
    if (!seen_backward) continue;
    ++votes->pairs;
    votes->fthenb += !forward_after_backward && before == forwards;
    votes->one_f_one_b += before == expect_1f1b;
    votes->eager += before == expect_eager;
  }
}

// Forwards before the first backward on every stage and step of every
// pipeline, against what each schedule prints (Paddle's pipeline_scheduler
// passes).
OrderVotes VoteOnOrder(const Timeline& timeline, int stages, int micro_batches, int threads) {
  const UnfinishedStepSet unfinished(timeline);  // a stopped step runs no schedule to its end
  const std::vector<PipelineChain> chains = PipelineChains(timeline);
  std::vector<OrderVotes> by_chain(chains.size());  // each pipeline on a thread, then summed
  ParallelFor(chains.size(), threads, [&](size_t c) {
    const PipelineChain& chain = chains[c];
    int stage = 0;  // without a topology, workers with no jobs are no stage
    for (size_t s = 0; s < chain.stages.size(); ++s) {
      const Worker* worker = chain.stages[s].second;
      if (worker->jobs.empty()) continue;
      const int remaining = stages - (timeline.topology.hybrid() ? chain.numbers[s] : stage++);
      VoteOfWorker(*worker, unfinished, std::min(micro_batches, remaining), std::min(micro_batches, 2 * remaining - 1),
                   &by_chain[c]);
    }
  });
  OrderVotes votes;
  for (const OrderVotes& v : by_chain) {
    votes.pairs += v.pairs;
    votes.fthenb += v.fthenb;
    votes.one_f_one_b += v.one_f_one_b;
    votes.eager += v.eager;
  }
  return votes;
}

double Share(size_t part, size_t whole) { return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0; }

double MeanMicros(const std::map<std::string, TypeAnalysis>& types, Pass pass) {
  Nanos total = 0;
  size_t count = 0;
  for (const auto& [type, t] : types)
    if (ClassifyJobType(type).pass == pass) {
      total = SaturatingAdd(total, t.total);
      count += t.count;
    }
  return count ? static_cast<double>(total) / static_cast<double>(count) / 1000.0 : 0;
}

// p stages, m micro-batches, v chunks: (p - 1) / (v m + p - 1), the share of
// a step that is idle (GPipe, 1F1B: v = 1; Narayanan et al. 2021 for v > 1).
double IdealOfOneForwardOneBackward(int p, int m, int v) {
  return static_cast<double>(p - 1) / static_cast<double>(v * m + p - 1);
}

ScheduleFit ZeroBubble(const std::map<std::string, TypeAnalysis>& types, int p, int m, int chunks) {
  ScheduleFit fit;
  fit.chunks = chunks;
  if (chunks >= 2) {
    fit.kind = ScheduleKind::kZeroBubbleV;
    fit.name = chunks == 2 ? "ZB-V" : "zero-bubble V (" + std::to_string(chunks) + " chunks)";
    fit.note = "no closed form is published; zero when forward, backward_b and backward_w take equal time";
    return fit;
  }
  fit.kind = ScheduleKind::kZeroBubbleH1;
  fit.name = "ZB-H1";
  const double f = MeanMicros(types, Pass::kForward), b = MeanMicros(types, Pass::kBackwardInput),
               w = MeanMicros(types, Pass::kBackwardWeight);
  if (f <= 0 || b <= 0 || w <= 0) {
    fit.note = "needs forward, backward_b and backward_w times";
    return fit;
  }
  // Qi et al. 2024, Table 2: bubble (p - 1)(T_F + T_B - T_W) beside m (T_F + T_B + T_W) of work.
  const double bubble = std::max(0.0, (p - 1) * (f + b - w));
  fit.ideal_bubble = bubble / (m * (f + b + w) + bubble);
  return fit;
}

}  // namespace

std::vector<std::pair<bool, int>> OneF1BOrder(int stages, int stage, int micro_batches) {
  std::vector<std::pair<bool, int>> order;
  const int warm = std::min(stages - stage - 1, micro_batches);
  int f = 0, b = 0;
  for (; f < warm; ++f) order.push_back({true, f});
  while (f < micro_batches) {
    order.push_back({true, f++});
    order.push_back({false, b++});
  }
  while (b < micro_batches) order.push_back({false, b++});
  return order;
}

JobKind ClassifyJobType(const std::string& type) {
  JobKind kind;
  // Longest prefixes first: "backward_b" before "backward".
  if (ChunkAfter(type, "backward_b", &kind.chunk)) kind.pass = Pass::kBackwardInput;
  else if (ChunkAfter(type, "backward_w", &kind.chunk)) kind.pass = Pass::kBackwardWeight;
  else if (ChunkAfter(type, "backward", &kind.chunk)) kind.pass = Pass::kBackward;
  else if (ChunkAfter(type, "forward", &kind.chunk)) kind.pass = Pass::kForward;
  else kind.chunk = -1;
  return kind;
}

ScheduleFit RecogniseSchedule(const Timeline& timeline, int stages, int micro_batches,
                              const std::map<std::string, TypeAnalysis>& types, int threads) {
  ScheduleFit fit;
  if (stages <= 0 || micro_batches <= 0) {
    fit.note = "no forward jobs to count micro-batches by";
    return fit;
  }
  std::set<int> chunks;
  bool split_backward = false;
  for (const auto& [type, t] : types) {
    const JobKind kind = ClassifyJobType(type);
    if (kind.pass == Pass::kOther) continue;
    if (kind.chunk >= 0) chunks.insert(kind.chunk);
    split_backward |= kind.pass == Pass::kBackwardInput || kind.pass == Pass::kBackwardWeight;
  }
  const int v = std::max<int>(1, static_cast<int>(chunks.size()));
  if (stages == 1) {
    fit = {ScheduleKind::kSingleStage, "one stage", v, 0.0, "no pipeline: nothing to wait for"};
    return fit;
  }
  if (split_backward) return ZeroBubble(types, stages, micro_batches, v);
  if (v >= 2) {
    fit = {ScheduleKind::kInterleaved1F1B, "interleaved 1F1B", v, IdealOfOneForwardOneBackward(stages, micro_batches, v), ""};
    return fit;
  }
  const OrderVotes votes = VoteOnOrder(timeline, stages, micro_batches, threads);
  const double ideal = IdealOfOneForwardOneBackward(stages, micro_batches, 1);
  if (Share(votes.one_f_one_b, votes.pairs) >= kAgreement)
    fit = {ScheduleKind::k1F1B, "1F1B", 1, ideal, ""};
  else if (Share(votes.fthenb, votes.pairs) >= kAgreement)
    fit = {ScheduleKind::kFThenB, "FThenB", 1, ideal, ""};
  else if (Share(votes.eager, votes.pairs) >= kAgreement)
    fit = {ScheduleKind::kEager1F1B, "Eager1F1B", 1, ideal, ""};
  else
    fit.note = votes.pairs == 0 ? "no step has both forward and backward jobs"
                                : "the order of forward and backward jobs matches none of FThenB, 1F1B and Eager1F1B";
  return fit;
}

}  // namespace jobviz
