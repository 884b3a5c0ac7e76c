#include "model/unfinished_steps.h"

#include "model/step_counts.h"

#include "read/parallel_for.h"

#include <algorithm>
#include <string>
#include <map>
#include <unordered_map>

namespace jobviz {

namespace {

// Keeps the most of each type's count (a step's most on any worker, a worker's expected).
void Add(std::vector<TypeCount>& types, std::uint32_t type, std::uint32_t count, bool pass) {
  for (TypeCount& t : types)
    if (t.type == type) {
      t.count = std::max(t.count, count);
      return;
    }
  types.push_back({type, count, pass});
}

// A set of stage numbers, filled a (worker, step, type) at a time (millions
// of times at 100,000 GPUs, where a std::set's node per insert was what it
// cost): appended, a stage repeated by the worker before skipped, then
// sorted and made unique once by Finish() before size() is read. Its memory
// is what it was given, whatever the stage numbers are.
class StageSet {
 public:
  void insert(int stage) {
    if (stages_.empty() || stages_.back() != stage) stages_.push_back(stage);
  }
  void Finish() {
    std::sort(stages_.begin(), stages_.end());
    stages_.erase(std::unique(stages_.begin(), stages_.end()), stages_.end());
  }
  size_t size() const { return stages_.size(); }  // after Finish()

 private:
  std::vector<int> stages_;
};

// Whether the worker has a job begun after its last one that no line of
// its last step ended: it never finished that step.
bool OpenInLastStep(const Worker& worker, std::int64_t step) {
  if (worker.in_flight.empty()) return false;
  const Nanos last_end = LastJobEnd(worker);
  for (const InFlightJob& open : worker.in_flight) {
    if (!OpenAfter(open, last_end)) continue;
    size_t seen = 0;
    bool ran = false;  // the same job already ran in the step: the line is of a later one
    for (auto it = worker.jobs.rbegin(); it != worker.jobs.rend() && it->step == step && seen < 4096; ++it, ++seen)
      ran |= it->type == open.type && it->micro_batch == open.micro_batch;
    if (!ran) return true;
  }
  return false;
}

// With no closing job (optimizer) in a lone step, the workers whose logs
// went silent well before the others': the largest gap between log ends,
// with at most half the workers before it (a finished run's logs may end
// apart, but not most of them early with a few going on). Only stamped
// ends tell a log that went on (a job's end alone says nothing of when the
// log stopped; a log without one ends with its last job).
std::vector<size_t> SilentBeforeClosing(const std::vector<Worker*>& workers,
                                        const std::vector<std::vector<StepCounts>>& counts) {
  constexpr Nanos kGap = 6'000'000;  // 1 ms past the 5 ms clocks may be off across machines
  std::vector<std::pair<Nanos, size_t>> ends;
  for (size_t w = 0; w < workers.size(); ++w) {
    if (counts[w].empty()) continue;
    if (counts[w].size() != 1) return {};
    for (const TypeCount& t : counts[w].front().types)
      if (!t.pass) return {};
    // A log with no stamped line after its last job ends with that job (a rank that died).
    ends.emplace_back(std::max(workers[w]->end.stamped, LastJobEnd(*workers[w])), w);
  }
  if (ends.size() < 2) return {};
  std::sort(ends.begin(), ends.end());
  size_t cut = 0;
  Nanos widest = 0;
  for (size_t k = 1; k < ends.size(); ++k)
    if (ends[k].first - ends[k - 1].first > widest) {
      widest = ends[k].first - ends[k - 1].first;
      cut = k;
    }
  if (widest <= kGap || 2 * cut > ends.size()) return {};
  std::vector<size_t> silent;
  for (size_t k = 0; k < cut; ++k) silent.push_back(ends[k].second);
  return silent;
}

}  // namespace

UnfinishedSteps MarkUnfinishedSteps(Timeline* timeline, int threads) {
  UnfinishedSteps result;
  const std::vector<Worker*> workers = AllWorkers(timeline);
  result.workers.resize(workers.size());
  result.last_job_ends.resize(workers.size());
  const bool steps = !timeline->steps.empty();
  std::vector<std::vector<StepCounts>> counts(workers.size());
  ParallelFor(workers.size(), threads, [&](size_t w) {
    if (steps) counts[w] = CountByStep(*workers[w]);
    result.last_job_ends[w] = LastJobEnd(*workers[w]);
  });
  if (!steps) return result;
  // The most jobs of each pass type any worker has in each step.
  std::unordered_map<std::int64_t, std::vector<TypeCount>> step_most;
  for (const auto& worker_counts : counts)
    for (const StepCounts& s : worker_counts)
      for (const TypeCount& t : s.types)
        if (t.pass) Add(step_most[s.step], t.type, t.count, true);
  // The steps of each run, in order (keys sort by run, then step).
  std::vector<std::int64_t> keys;
  for (const StepSpan& span : timeline->steps) keys.push_back(span.step);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  const auto next_in_run = [&](std::int64_t step) -> std::int64_t {
    const auto it = std::upper_bound(keys.begin(), keys.end(), step);
    return it != keys.end() && StepRun(*it) == StepRun(step) ? *it : kNoStep;
  };
  std::map<int, std::int64_t> first_by_run;
  // Workers of one stage (its tensor-parallel peers and replicas) run the
  // same job types: what all the others of its stage ran in a step, a worker
  // should have run too (the optimizer a stage that died after its last pass
  // never reached, with no earlier step of its own to tell).
  // Per (stage, step): the workers with jobs there, and per type the two
  // smallest counts and how many workers ran it, so that the least any
  // *other* worker of the stage ran is one look-up (linear in workers at
  // hundreds of replicas, not quadratic).
  struct TypeLeast {
    std::uint32_t type = 0, holders = 0, least = UINT32_MAX, second = UINT32_MAX, at_least = 0;
    bool pass = false;
  };
  struct StageStep {
    std::uint32_t workers = 0;
    std::vector<TypeLeast> types;
  };
  std::map<std::pair<int, std::int64_t>, StageStep> stage_steps;
  for (size_t w = 0; w < workers.size(); ++w) {
    if (!workers[w]->role.known()) continue;
    for (const StepCounts& c : counts[w]) {
      StageStep& ss = stage_steps[{workers[w]->role.stage, c.step}];
      ++ss.workers;
      for (const TypeCount& t : c.types) {
        auto it = std::find_if(ss.types.begin(), ss.types.end(), [&](const TypeLeast& x) { return x.type == t.type; });
        if (it == ss.types.end()) it = ss.types.insert(ss.types.end(), TypeLeast{t.type, 0, UINT32_MAX, UINT32_MAX, 0, t.pass});
        ++it->holders;
        if (t.count < it->least) {
          it->second = it->least;
          it->least = t.count;
          it->at_least = 1;
        } else if (t.count == it->least) {
          ++it->at_least;
        } else {
          it->second = std::min(it->second, t.count);
        }
      }
    }
  }
  const auto stage_least = [&](size_t w, const StepCounts& own) {
    std::vector<TypeCount> least;
    if (!workers[w]->role.known()) return least;
    const auto it = stage_steps.find({workers[w]->role.stage, own.step});
    if (it == stage_steps.end() || it->second.workers < 2) return least;
    for (const TypeLeast& t : it->second.types) {
      const std::uint32_t mine = own.Count(t.type);
      // Every other worker of the stage ran it: all holders but itself.
      if (t.holders - (mine > 0 ? 1 : 0) + 1 < it->second.workers) continue;
      const std::uint32_t others = mine > 0 && mine == t.least && t.at_least == 1 ? t.second : t.least;
      if (others != UINT32_MAX && others > 0) least.push_back({t.type, others, t.pass});
    }
    return least;
  };
  // Every stage runs the same job types but the pipeline's two ends, which
  // send or receive nothing on one side (recv_forward, send_backward, ...):
  // a type every other worker ran in a step, a worker between the ends
  // should have run too.
  int last_stage = 0;
  for (const Worker* w : workers) last_stage = std::max(last_stage, w->role.stage);
  const auto at_an_end = [&](size_t w) {
    if (workers[w]->role.known()) return workers[w]->role.stage == 0 || workers[w]->role.stage == last_stage;
    return w == 0 || w + 1 == workers.size();  // one pipeline in machine, then worker order
  };
  // Per step: how many workers ran jobs in it, and how many ran each type.
  struct StepTypes {
    size_t with_jobs = 0;
    std::vector<TypeCount> workers_with;  // count: workers that ran the type
  };
  std::unordered_map<std::int64_t, StepTypes> per_step;
  for (const auto& worker_counts : counts)
    for (const StepCounts& c : worker_counts) {
      StepTypes& st = per_step[c.step];
      ++st.with_jobs;
      for (const TypeCount& t : c.types) {
        auto it = std::find_if(st.workers_with.begin(), st.workers_with.end(),
                               [&](const TypeCount& x) { return x.type == t.type; });
        if (it == st.workers_with.end()) st.workers_with.push_back({t.type, 1, t.pass, t.backward});
        else ++it->count;
      }
    }
  // The same by stage, where roles are known: a stage's tensor-parallel
  // peers block inside the same job, so a type all other stages ran is
  // missing on two workers, not one.
  struct StageTypes {
    StageSet with_jobs;
    std::map<std::uint32_t, StageSet> stages_with;  // type -> stages that ran it
  };
  std::unordered_map<std::int64_t, StageTypes> per_step_stage;
  for (size_t w = 0; w < workers.size(); ++w) {
    if (!workers[w]->role.known()) continue;
    for (const StepCounts& c : counts[w]) {
      StageTypes& st = per_step_stage[c.step];
      st.with_jobs.insert(workers[w]->role.stage);
      for (const TypeCount& t : c.types) st.stages_with[t.type].insert(workers[w]->role.stage);
    }
  }
  for (auto& [step, st] : per_step_stage) {
    st.with_jobs.Finish();
    for (auto& [type, stages] : st.stages_with) stages.Finish();
  }
  const Name optimizer("optimizer");
  // Each worker's stop on its own (the tables above are only read), on every
  // thread: at 131,072 workers this was a third of a second on one.
  ParallelFor(workers.size(), threads, [&](size_t w) {
    const std::vector<StepCounts>& steps = counts[w];
    if (steps.empty()) return;
    // What each of its steps should hold: its fullest step's count of each
    // type, and for passes at least what any worker ran in the step.
    std::vector<TypeCount> expected;
    for (const StepCounts& s : steps)
      for (const TypeCount& t : s.types) Add(expected, t.type, t.count, t.pass);
    const StepCounts& last = steps.back();
    for (const TypeCount& t : stage_least(w, last)) Add(expected, t.type, t.count, t.pass);
    // Every stage runs every pass (each micro-batch forward and backward).
    if (const auto most = step_most.find(last.step); most != step_most.end())
      for (const TypeCount& t : most->second) Add(expected, t.type, 0, true);
    if (const auto it = per_step.find(last.step); it != per_step.end() && it->second.with_jobs >= 3 && !at_an_end(w))
      for (const TypeCount& t : it->second.workers_with)
        if (last.Count(t.type) == 0 && t.count + 1 == it->second.with_jobs) Add(expected, t.type, 1, t.pass);
    // The closing job (Paddle's optimizer) every other stage ran, the ends too.
    if (const auto it = per_step_stage.find(last.step);
        it != per_step_stage.end() && it->second.with_jobs.size() >= (at_an_end(w) ? 2 : 3))
      for (const auto& [type, stages] : it->second.stages_with)
        if (last.Count(type) == 0 && stages.size() + 1 == it->second.with_jobs.size() &&
            (!at_an_end(w) || type == optimizer.index()))
          Add(expected, type, 1, false);
    size_t want = 0, whole = 0;
    bool short_of = false;
    const auto most = step_most.find(last.step);
    for (const TypeCount& t : expected) {
      std::uint32_t need = t.count;
      if (t.pass && most != step_most.end())
        for (const TypeCount& m : most->second)
          if (m.type == t.type) need = std::max(need, m.count);
      want += need;
      whole += t.count;
      short_of |= last.Count(t.type) < need;
    }
    short_of |= OpenInLastStep(*workers[w], last.step) || last.missing_backwards > 0;
    want += last.missing_backwards;
    WorkerStop& stop = result.workers[w];
    if (short_of) {
      stop = {last.step, last.jobs, want};
    } else if (const std::int64_t next = next_in_run(last.step); next != kNoStep) {
      stop = {next, 0, whole};  // others went on to a step it never reached
    }
  });
  for (const WorkerStop& stop : result.workers) {
    if (stop.step == kNoStep) continue;
    auto [it, inserted] = first_by_run.try_emplace(StepRun(stop.step), stop.step);
    if (!inserted) it->second = std::min(it->second, stop.step);
  }
  if (first_by_run.empty()) {
    // Workers with no job at all, in a step whose pipeline never turned
    // (forward passes and not one backward): they stopped before their
    // first job and held the others up.
    std::int64_t no_turn = kNoStep;
    for (const auto& [step, st] : per_step) {
      bool forward = false, backward = false;
      for (const TypeCount& t : st.workers_with) {
        forward |= t.pass && !t.backward;
        backward |= t.backward;
      }
      if (forward && !backward && (no_turn == kNoStep || step < no_turn)) no_turn = step;
    }
    for (size_t w = 0; w < workers.size() && no_turn != kNoStep; ++w)
      if (counts[w].empty()) {
        result.workers[w] = {no_turn, 0, 1};
        first_by_run.try_emplace(StepRun(no_turn), no_turn);
      }
  }
  if (first_by_run.empty())
    for (const size_t w : SilentBeforeClosing(workers, counts)) {
      const StepCounts& only = counts[w].front();
      result.workers[w] = {only.step, only.jobs, only.jobs + 1};
      first_by_run.try_emplace(StepRun(only.step), only.step);
    }
  for (StepSpan& span : timeline->steps) {
    const auto it = first_by_run.find(StepRun(span.step));
    span.unfinished = it != first_by_run.end() && span.step >= it->second;
    if (span.unfinished) ++result.steps;
  }
  if (!first_by_run.empty()) result.first = first_by_run.rbegin()->second;
  const UnfinishedStepSet set(*timeline);
  if (!set.empty())
    for (const Worker* w : workers)
      for (const Job& job : w->jobs) result.jobs += set.Contains(job.step);
  return result;
}

UnfinishedStepSet::UnfinishedStepSet(const Timeline& timeline) {
  for (const StepSpan& span : timeline.steps)
    if (span.unfinished) steps_.push_back(span.step);
  std::sort(steps_.begin(), steps_.end());
}

bool UnfinishedStepSet::Contains(std::int64_t step) const {
  return !steps_.empty() && step != kNoStep && std::binary_search(steps_.begin(), steps_.end(), step);
}

}  // namespace jobviz
