#include "analyse/stop_groups.h"

#include <algorithm>
#include <string>

#include "analyse/schedule.h"

namespace jobviz::stop {

namespace {

// The worker's job (type, micro-batch) of `step`, from its last jobs back.
const Job* FindJob(const Worker& worker, Name type, std::int64_t micro_batch, std::int64_t step) {
  size_t earlier = 0;
  for (auto it = worker.jobs.rbegin(); it != worker.jobs.rend() && earlier < 512; ++it) {
    if (it->step == step && it->type == type && it->micro_batch == micro_batch) return &*it;
    if (it->step != kNoStep && it->step < step) ++earlier;
  }
  return nullptr;
}

std::string ChunkType(const std::string& prefix, int chunk) { return prefix + std::to_string(chunk); }

struct Input {
  int lane = -1;
  Name type;
};


// Whether every worker of `lane` finished job (type, micro-batch) of `step`; when it did, when.
bool Arrived(const Context& c, int lane, Name type, std::int64_t micro_batch, std::int64_t step, Nanos* at) {
  Nanos latest = 0;
  for (const std::uint32_t w : c.graph.lanes[lane].workers) {
    const Job* job = FindJob(*c.graph.workers[w], type, micro_batch, step);
    if (!job) return false;
    latest = std::max(latest, job->end);
  }
  *at = latest;
  return true;
}

// The input a lane's next job waits for through a hand-off (docs/analysis.md, "The step graph").
Input HandOffInput(const Context& c, const StageLane& lane, Name type) {
  const JobKind kind = ClassifyJobType(type.str());
  switch (kind.pass) {
    case Pass::kForward:
      if (lane.before >= 0) return {lane.before, type};
      if (kind.chunk > 0 && lane.last >= 0) return {lane.last, Name(ChunkType("forward", kind.chunk - 1))};
      return {};
    case Pass::kBackward:
    case Pass::kBackwardInput: {
      if (lane.after >= 0) return {lane.after, type};
      const std::string prefix = kind.pass == Pass::kBackward ? "backward" : "backward_b";
      if (kind.chunk >= 0 && kind.chunk < c.max_chunk && lane.first >= 0)
        return {lane.first, Name(ChunkType(prefix, kind.chunk + 1))};
      return {};
    }
    default: return {};
  }
}

// With no earlier step to read the stage's order from (a run that stopped
// in its first step): 1F1B's order for the stage (docs/analysis.md), when
// the jobs it ran are that order's start, then the step's closing job.
// p: the stages there are; m: the most micro-batches any stage ran forward.
bool OneF1BNext(const Context& c, const StageLane& lane, const std::vector<const Job*>& done, Name* type,
                std::int64_t* micro_batch, Nanos* usual) {
  if (c.forward_type.empty()) return false;
  const int p = c.graph.stage_count;
  const int s = c.graph.stage_rank[static_cast<size_t>(&lane - c.graph.lanes.data())];
  const std::vector<std::pair<bool, int>> order = OneF1BOrder(p, s, c.micro_batches);
  if (done.size() > order.size()) return false;
  for (size_t k = 0; k < done.size(); ++k)
    if (done[k]->type != (order[k].first ? c.forward_type : c.backward_type) || done[k]->micro_batch != order[k].second)
      return false;
  if (done.size() == order.size()) {  // every pass run: the step's closing job
    *type = c.closing_type;
    *micro_batch = 0;
    *usual = c.closing_usual;
    return true;
  }
  const auto [forward, mb] = order[done.size()];
  *type = forward ? c.forward_type : !c.backward_type.empty() ? c.backward_type : Name("backward");
  *micro_batch = mb;
  *usual = forward ? c.forward_usual : c.backward_usual;
  return true;
}

// The job the lane hangs in, of the in-flight lines no job line ended (after
// the lane's last finished job): the first one its stream reached. A job
// "not started" waits behind it on the same stream, however much later the
// watchdog wrote its line; with none started, the first one enqueued.
const InFlightJob* OpenJob(const Context& c, const LaneStop& lane, const Job* last) {
  const InFlightJob* open = nullptr;
  const auto before = [](const InFlightJob& a, const InFlightJob& b) {
    return a.started != b.started ? a.started : a.start < b.start;
  };
  for (const std::uint32_t w : lane.workers)
    for (const InFlightJob& job : c.graph.workers[w]->in_flight)
      if ((!last || OpenAfter(job, last->end)) && (!open || before(job, *open))) open = &job;
  return open;
}

}  // namespace

// What a first step's order is read from: the plain "forward" and
// "backward" of the run (if that is what it runs), the most micro-batches
// begun, and the job that closes a step's passes.
void LearnFirstStepOrder(Context& c) {
  const auto closing = [&]() -> const Job* {
    for (const Worker* w : c.graph.workers)
      for (size_t j = 1; j < w->jobs.size(); ++j)
        if (!IsPass(w->jobs[j].type) && IsPass(w->jobs[j - 1].type) && w->jobs[j].step == w->jobs[j - 1].step)
          return &w->jobs[j];
    return nullptr;
  };
  if (const Job* job = closing()) {
    c.closing_type = job->type;
    c.closing_usual = job->end - job->start;
  }
  // A forward the watchdog saw begin counts among the micro-batches too.
  for (const Worker* w : c.graph.workers)
    for (const InFlightJob& job : w->in_flight)
      if (job.type == "forward")
        c.micro_batches = std::max<int>(c.micro_batches, static_cast<int>(std::min<std::int64_t>(job.micro_batch + 1, 1 << 20)));
  for (const Worker* w : c.graph.workers)
    for (const Job& job : w->jobs) {
      if (job.type == "forward") {
        c.forward_type = job.type;
        c.micro_batches = std::max<int>(c.micro_batches, static_cast<int>(std::min<std::int64_t>(std::int64_t{job.micro_batch} + 1, 1 << 20)));
        c.forward_usual = job.end - job.start;
      } else if (job.type == "backward") {
        c.backward_type = job.type;
        c.backward_usual = job.end - job.start;
      } else if (ClassifyJobType(job.type.str()).chunk >= 0) {
        c.forward_type = c.backward_type = Name();  // chunks: no plain 1F1B to follow
        return;
      }
    }
}

void PlaceLane(Context& c, size_t l) {
  LaneStop& out = c.report.lanes[l];
  const StageLane& lane = c.graph.lanes[l];
  const Position& p = c.positions[out.workers.front()];
  if (p.step == kNoStep) {
    out.state = LaneState::kFinished;
    return;
  }
  const size_t k = p.done.size();
  const Job* last = k > 0 ? p.done.back() : p.before;
  if (last) out.last = {last->type, last->micro_batch, last->step, last->start, last->end};
  std::vector<const Job*> plan = p.plan;
  if (plan.size() <= k)  // no earlier step: the furthest same stage of another replica
    for (const int other : c.graph.SameStage(static_cast<int>(l))) {
      if (other == static_cast<int>(l)) continue;
      const Position& q = c.positions[c.report.lanes[other].workers.front()];
      if (q.step == p.step && q.done.size() > plan.size()) plan = q.done;
    }
  Name next_type;
  std::int64_t next_micro_batch = 0;
  bool known = true;
  const InFlightJob* open = OpenJob(c, out, last);
  if (open) {
    // The watchdog saw it begin (or wait to) and not end: what it hangs in,
    // stuck there or waiting inside for an input, by the same rules.
    next_type = open->type;
    next_micro_batch = open->micro_batch;
    out.in_flight = true;
    out.in_flight_started = open->started;
    out.in_flight_since = open->start;
    out.in_flight_seen = open->seen;
    // Its usual length, where its earlier step ran the same job.
    out.usual = -1;
    for (const Job* job : plan)
      if (job->type == open->type && job->micro_batch == open->micro_batch) out.usual = job->end - job->start;
  } else if (plan.size() > k) {
    next_type = plan[k]->type;
    next_micro_batch = plan[k]->micro_batch;
    out.usual = plan[k]->end - plan[k]->start;
  } else {
    known = OneF1BNext(c, lane, p.done, &next_type, &next_micro_batch, &out.usual);
  }
  if (known) out.next = {next_type, next_micro_batch, p.step, 0, 0};
  const Nanos free_at = last ? last->end : 0;
  Nanos arrived = 0;
  bool in_collective = false;
  const Input input = known ? HandOffInput(c, lane, next_type) : Input{};
  const bool after_passes = std::any_of(p.done.begin(), p.done.end(), [](const Job* j) { return IsPass(j->type); }) &&
                            (known ? !IsPass(next_type) : true);
  if (input.lane >= 0) {
    out.input = input.type.str() + " " + std::to_string(next_micro_batch) + " from stage " +
                std::to_string(c.graph.lanes[input.lane].stage);
    if (!Arrived(c, input.lane, input.type, next_micro_batch, p.step, &arrived)) {
      out.state = LaneState::kWaiting;
      out.waits_on = input.lane;
      return;
    }
    out.input_arrived = arrived;
  } else if (after_passes) {
    // After the step's passes: the gradients' all-reduce with the other
    // replicas of the stage, or with every stage under a global barrier.
    const GroupPasses& group = GroupOf(c, l, p.step);
    const int missing = group.not_done[0] != static_cast<int>(l) ? group.not_done[0] : group.not_done[1];
    if (missing >= 0) {
      out.state = LaneState::kWaiting;
      out.waits_on = missing;
      const StageLane& other = c.graph.lanes[missing];
      out.input = "the gradients of stage " + std::to_string(other.stage) + " replica " +
                  std::to_string(other.replica) + (c.report.all_reduce_global ? " (a global all-reduce)" : "");
      return;
    }
    arrived = group.latest;
    out.input = c.report.all_reduce_global ? "every stage's gradients (a global all-reduce)"
                                           : !c.graph.HasOtherReplicas(l) ? "" : "the other replicas' gradients";
    out.input_arrived = arrived;
    // Every member reached the all-reduce and none came out of it.
    in_collective = group.members >= 2 && !group.closed;
  }
  if (!known) {
    // Nothing after its passes to read: done with what the logs show.
    out.state = after_passes ? LaneState::kFinished : LaneState::kUnknown;
    return;
  }
  out.state = in_collective ? LaneState::kInAllReduce : LaneState::kStuck;
  out.ready = std::max(open ? open->start : free_at, arrived);
}

}  // namespace jobviz::stop
