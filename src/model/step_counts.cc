#include "model/step_counts.h"

#include <algorithm>
#include <deque>
#include <string>
#include <string_view>

namespace jobviz {

namespace {

// Forward and backward passes run once per micro-batch (and chunk) on every
// stage: a step's count of one is the same on every worker that has it.
bool CountsAsPass(const std::string& type) { return type.starts_with("forward") || type.starts_with("backward"); }

// The forward type a backward type undoes: "backward_b1" -> "forward1".
std::string ForwardOf(std::string_view backward) {
  std::string_view chunk = backward.substr(std::string_view("backward").size());
  if (chunk.starts_with("_b") || chunk.starts_with("_w")) chunk.remove_prefix(2);
  return "forward" + std::string(chunk);
}

// What a worker's job types say, looked up once a type, not once a step.
struct TypeFacts {
  Name type;
  bool pass = false;        // CountsAsPass
  bool backward = false;    // a backward pass of some kind
  std::string forward;      // a backward type's forward type (ForwardOf)
};

const TypeFacts& FactsOf(Name type, std::deque<TypeFacts>& known) {
  for (const TypeFacts& facts : known)
    if (facts.type == type) return facts;
  const bool backward = type.str().starts_with("backward");
  return known.emplace_back(TypeFacts{type, CountsAsPass(type.str()), backward, backward ? ForwardOf(type.str()) : ""});
}

// `facts`: of each of the step's types, in the order of counts.types.
size_t MissingBackwards(const StepCounts& counts, const std::vector<const TypeFacts*>& facts) {
  size_t missing = 0;
  for (size_t i = 0; i < counts.types.size(); ++i) {
    if (!counts.types[i].backward) continue;
    for (size_t j = 0; j < counts.types.size(); ++j)
      if (facts[j]->type == facts[i]->forward && counts.types[j].count > counts.types[i].count)
        missing += counts.types[j].count - counts.types[i].count;
  }
  return missing;
}

}  // namespace

// A step's count of a type is how many distinct micro-batches ran it: a
// line printed twice is one job run once. A worker's jobs are in time
// order, so its steps come one after the other: each step's (type,
// micro-batch) pairs are sorted alone (a few dozen), not the worker's all.
std::vector<StepCounts> CountByStep(const Worker& worker) {
  std::vector<std::pair<std::int64_t, size_t>> order;  // (step, job), in job order
  order.reserve(worker.jobs.size());
  for (size_t j = 0; j < worker.jobs.size(); ++j)
    if (worker.jobs[j].step != kNoStep) order.emplace_back(worker.jobs[j].step, j);
  if (!std::is_sorted(order.begin(), order.end())) std::sort(order.begin(), order.end());  // steps interleaved (clock set back)
  // Everything sized once: this runs for every worker (at 131,072 GPUs, 28
  // allocations a worker as the vectors grew).
  size_t step_count = order.empty() ? 0 : 1;
  for (size_t i = 1; i < order.size(); ++i) step_count += order[i].first != order[i - 1].first;
  std::vector<StepCounts> steps;
  steps.reserve(step_count);
  std::deque<TypeFacts> known;  // a worker has a handful of types; deque: the pointers below stay
  std::vector<const TypeFacts*> facts;  // per type of the step
  facts.reserve(8);
  struct Ran {
    Name type;
    std::int64_t micro_batch;
    auto Key() const { return std::make_pair(type.index(), micro_batch); }
  };
  std::vector<Ran> ran;  // the jobs of one step
  ran.reserve(order.size());
  for (size_t first = 0, end = 0; first < order.size(); first = end) {
    ran.clear();
    while (end < order.size() && order[end].first == order[first].first) {
      const Job& job = worker.jobs[order[end++].second];
      ran.push_back({job.type, job.micro_batch});
    }
    std::sort(ran.begin(), ran.end(), [](const Ran& a, const Ran& b) { return a.Key() < b.Key(); });
    ran.erase(std::unique(ran.begin(), ran.end(), [](const Ran& a, const Ran& b) { return a.Key() == b.Key(); }), ran.end());
    StepCounts& counts = steps.emplace_back(StepCounts{order[first].first, ran.size(), {}});
    size_t type_count = ran.empty() ? 0 : 1;
    for (size_t i = 1; i < ran.size(); ++i) type_count += ran[i].type != ran[i - 1].type;
    counts.types.reserve(type_count);
    facts.clear();
    for (size_t i = 0; i < ran.size(); ++i) {
      if (counts.types.empty() || counts.types.back().type != ran[i].type.index()) {
        const TypeFacts& type = FactsOf(ran[i].type, known);
        counts.types.push_back({ran[i].type.index(), 0, type.pass, type.backward});
        facts.push_back(&type);
      }
      ++counts.types.back().count;
    }
    counts.missing_backwards = MissingBackwards(counts, facts);
  }
  return steps;  // in step order
}

}  // namespace jobviz
