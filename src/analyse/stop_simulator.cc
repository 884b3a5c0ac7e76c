#include "analyse/stop_simulator.h"

#include "analyse/schedule.h"

#include <algorithm>
#include <map>
#include <string>

namespace jobviz::sim {

namespace {

// A job of a stage's order: a pass of a micro-batch, or the optimizer (mb -1).
struct Planned {
  bool forward = true, optimizer = false;
  int micro_batch = 0;
};

// A stage's 1F1B passes, then its optimizer.
std::vector<Planned> OneF1B(int p, int s, int m) {
  std::vector<Planned> order;
  for (const auto& [forward, micro_batch] : OneF1BOrder(p, s, m)) order.push_back({forward, false, micro_batch});
  order.push_back({false, true, 0});
  return order;
}

struct Lane {
  bool dead = false;       // stops at stop_time
  bool hangs = false;      // kAllReduce: a member of the all-reduce that never completes
  bool stopped = false;    // reached a job it never finishes
  Nanos ready = 0, usual = 0;  // stopped: when that job could start, and its usual length
  size_t next = 0;         // into the order
  Nanos free = 0;
  std::vector<Nanos> forward_end, backward_end;  // per micro-batch, -1: not yet
  Nanos passes_end = -1;   // its last pass's end this step
  Name next_type;          // stopped: the job it never finished
  std::int64_t next_micro_batch = -1, next_step = kNoStep;
};

// An all-reduce group's state in a step: how many members ran all their
// passes, and the two latest ends of those (a member waits for the others').
struct GroupState {
  int members = 0, done = 0, dead = 0;
  Nanos latest = -1, second = -1;
  void Done(Nanos end) {
    ++done;
    if (end >= latest) {
      second = latest;
      latest = end;
    } else {
      second = std::max(second, end);
    }
  }
  // The latest end of the members other than one that ended at `own`.
  Nanos latest_others(Nanos own) const { return own == latest ? std::max(second, own) : latest; }
};

}  // namespace

const char* StopKindName(StopKind kind) {
  switch (kind) {
    case StopKind::kFinished: return "finished";
    case StopKind::kCut: return "cut for all";
    case StopKind::kWorker: return "one worker";
    case StopKind::kStage: return "one replica's stage";
    case StopKind::kMachine: return "one machine";
    case StopKind::kAllReduce: return "all-reduce hang";
    case StopKind::kBetweenSteps: return "between steps";
  }
  return "";
}

Timeline SimulateStop(const StopRun& spec, StopTruth* truth) {
  const SimRun& run = spec.run;
  *truth = {};
  SimRun shape = run;
  shape.steps = 0;
  Timeline t = Simulate(shape);  // the machines, workers, roles and topology, no jobs
  const int p = run.pp, m = run.micro_batches, ranks = run.pp * run.mp * run.dp;
  std::vector<Worker*> worker(static_cast<size_t>(ranks));
  const int per = std::max(1, run.per_machine);
  for (int r = 0; r < ranks; ++r) worker[r] = &t.machines[r / per].workers[r % per];
  const auto rank_of = [&](int replica, int stage, int peer) { return (replica * p + stage) * run.mp + peer; };
  Random random{spec.seed * 0x9E3779B97F4A7C15ULL + 1};
  for (int i = 0; i < 4; ++i) random.Next();

  // Who stops, and when: a random moment of a random step.
  std::vector<std::vector<Lane>> lanes(run.dp, std::vector<Lane>(p));
  const Nanos step_estimate = (m + p - 1) * (run.forward + run.backward) + run.optimizer;
  const int stop_step = random.Below(run.steps);
  const Nanos stop_offset = static_cast<Nanos>((0.02 + 0.96 * random.Next()) * static_cast<double>(step_estimate));
  const bool stops = spec.stop == StopKind::kWorker || spec.stop == StopKind::kStage || spec.stop == StopKind::kMachine;
  const bool blocks = stops || spec.stop == StopKind::kAllReduce;  // live workers end blocked for good
  // kAllReduce: the all-reduce that never completes (every lane, or one stage's replicas).
  const bool global_hang = spec.global_hang || run.dp < 2;
  const int hung_stage = global_hang ? kGlobalHang : random.Below(p);
  if (spec.stop == StopKind::kAllReduce) {
    truth->hung_all_reduce = hung_stage;
    truth->hung_step = stop_step;
    for (int r = 0; r < run.dp; ++r)
      for (int o = 0; o < p; ++o) lanes[r][o].hangs = global_hang || o == hung_stage;
  }
  if (stops) {
    const int victim = random.Below(ranks);
    if (spec.stop == StopKind::kMachine) {
      for (int r = victim / per * per; r < std::min(ranks, victim / per * per + per); ++r) {
        lanes[r / (run.mp * p)][(r / run.mp) % p].dead = true;
        truth->dead_workers.push_back(r);
      }
    } else {
      lanes[victim / (run.mp * p)][(victim / run.mp) % p].dead = true;
      if (spec.stop == StopKind::kWorker) truth->dead_workers.push_back(victim);
      else
        for (int peer = 0; peer < run.mp; ++peer)
          truth->dead_workers.push_back(rank_of(victim / (run.mp * p), (victim / run.mp) % p, peer));
    }
  }
  std::vector<GroupState> stage_group;
  GroupState all_lanes;
  std::uint64_t line = 1;
  Nanos step_start = 1'700'000'000'000'000'000;
  Nanos stop_time = -1, latest_end = step_start;
  bool halted = false;
  for (int step = 0; step < run.steps && !halted; ++step) {
    if (step == stop_step) stop_time = step_start + stop_offset;
    stage_group.assign(p, GroupState{});
    all_lanes = GroupState{};
    for (int r = 0; r < run.dp; ++r)
      for (int o = 0; o < p; ++o) {
        const bool dead = lanes[r][o].dead;
        stage_group[o].members++;
        stage_group[o].dead += dead;
        all_lanes.members++;
        all_lanes.dead += dead;
      }
    for (auto& replica : lanes)
      for (Lane& lane : replica) {
        lane.next = 0;
        lane.free = step_start;
        lane.forward_end.assign(m, -1);
        lane.backward_end.assign(m, -1);
        lane.passes_end = -1;
      }
    std::vector<std::vector<Planned>> order(p);
    for (int s = 0; s < p; ++s) order[s] = OneF1B(p, s, m);
    for (bool progress = true; progress;) {
      progress = false;
      for (int replica = 0; replica < run.dp; ++replica)
        for (int s = 0; s < p; ++s) {
          Lane& lane = lanes[replica][s];
          while (!lane.stopped && lane.next < order[s].size()) {
            const Planned job = order[s][lane.next];
            Nanos ready = lane.free;
            bool can = true;
            bool group_dead = false;  // a member of its all-reduce died before the collective could end
            if (job.optimizer) {
              // Its all-reduce: the stage's replicas, or every lane under a barrier.
              const GroupState& g = spec.barrier ? all_lanes : stage_group[s];
              if (g.done < g.members || (lane.hangs && step == stop_step)) {
                can = false;  // waits for the others' gradients, or inside an all-reduce that never completes
              } else {
                ready = std::max(ready, std::max(lane.passes_end, g.latest_others(lane.passes_end) + run.latency));
                group_dead = g.dead > (lane.dead ? 1 : 0) && stop_time >= 0 && ready + run.optimizer / 2 > stop_time;
              }
            } else if (job.forward && s > 0) {
              if (lanes[replica][s - 1].forward_end[job.micro_batch] < 0) can = false;
              else ready = std::max(ready, lanes[replica][s - 1].forward_end[job.micro_batch] + run.latency);
            } else if (!job.forward && s < p - 1) {
              if (lanes[replica][s + 1].backward_end[job.micro_batch] < 0) can = false;
              else ready = std::max(ready, lanes[replica][s + 1].backward_end[job.micro_batch] + run.latency);
            }
            if (!can) break;
            const Nanos base = job.optimizer ? run.optimizer : job.forward ? run.forward : run.backward;
            Nanos end = ready;
            std::vector<Nanos> ends(run.mp);
            for (int peer = 0; peer < run.mp; ++peer) {
              const double d = static_cast<double>(base) * (1 + run.jitter * (2 * random.Next() - 1));
              ends[peer] = ready + static_cast<Nanos>(d);
              end = std::max(end, ends[peer]);
            }
            const Name type = job.optimizer ? "optimizer" : job.forward ? "forward" : "backward";
            if (group_dead && !lane.dead) break;  // blocked inside the collective for good: no line
            if ((lane.dead || spec.stop == StopKind::kCut) && stop_time >= 0 && end > stop_time) {
              lane.stopped = true;  // it never finishes this job
              lane.next_type = type;
              lane.next_micro_batch = job.optimizer ? 0 : job.micro_batch;
              lane.next_step = step;
              lane.ready = ready;
              lane.usual = base;
              if (spec.in_flight && lane.dead && ready < stop_time)
                for (int peer = 0; peer < run.mp; ++peer) {
                  Worker& w = *worker[rank_of(replica, s, peer)];
                  w.in_flight.push_back({"0", type, job.optimizer ? 0 : job.micro_batch, ready, 0, line++, true});
                }
              break;
            }
            for (int peer = 0; peer < run.mp; ++peer)
              worker[rank_of(replica, s, peer)]->jobs.push_back(
                  Job{"0", type, job.optimizer ? 0 : job.micro_batch, ready, ends[peer], line++, step});
            if (!job.optimizer) (job.forward ? lane.forward_end : lane.backward_end)[job.micro_batch] = end;
            if (lane.next + 2 == order[s].size()) {
              lane.passes_end = end;
              stage_group[s].Done(end);
              all_lanes.Done(end);
            }
            lane.free = end;
            latest_end = std::max(latest_end, end);
            ++lane.next;
            progress = true;
          }
        }
    }
    Nanos step_end = step_start;
    for (int replica = 0; replica < run.dp; ++replica)
      for (int s = 0; s < p; ++s) {
        const Lane& lane = lanes[replica][s];
        if (lane.next < order[s].size()) halted = true;
        step_end = std::max(step_end, lane.free);
        // A live worker blocked for good: its next job began (the stream
        // reached it) and waits inside, in a receive or the all-reduce; the
        // watchdog writes it once stall_after has passed.
        if (spec.in_flight && blocks && !lane.dead && lane.next < order[s].size()) {
          const Planned job = order[s][lane.next];
          const Name type = job.optimizer ? "optimizer" : job.forward ? "forward" : "backward";
          for (int peer = 0; peer < run.mp; ++peer)
            worker[rank_of(replica, s, peer)]->in_flight.push_back(
                {"0", type, job.optimizer ? 0 : job.micro_batch, lane.free, 0, line++, true});
        }
      }
    if (!halted) step_start = step_end + run.step_gap;
    if (spec.stop == StopKind::kBetweenSteps && step == stop_step) {
      truth->hung_step = step;  // a data loader, a checkpoint: no job after it
      break;
    }
  }
  // The truth: the dead lanes that reached a job they never finished.
  for (int replica = 0; replica < run.dp && stops; ++replica)
    for (int s = 0; s < p; ++s) {
      const Lane& lane = lanes[replica][s];
      if (!lane.dead || !lane.stopped) continue;
      TruePlace place{replica, s, {}, lane.next_type, -1, lane.next_micro_batch, kNoStep, lane.next_step};
      place.in_all_reduce = lane.next_type == "optimizer" && (spec.barrier ? all_lanes.members : stage_group[s].members) > 1;
      const Worker& w = *worker[rank_of(replica, s, 0)];
      if (!w.jobs.empty()) {
        place.last_type = w.jobs.back().type;
        place.last_micro_batch = w.jobs.back().micro_batch;
        place.last_step = w.jobs.back().step;
      }
      truth->first.push_back(place);
    }
  truth->stopped = !truth->first.empty();
  truth->stop_time = stop_time;
  // The logs end at each worker's last line. A killed job's live ranks
  // print NCCL's timeout at the kill, when the run says so; the dead print
  // nothing more, and a copy has no line at the cut.
  const Nanos margin = static_cast<Nanos>((0.5 + 2.5 * random.Next()) * static_cast<double>(step_estimate));
  truth->kill_time = spec.stop == StopKind::kCut ? stop_time : latest_end + (spec.stop == StopKind::kFinished ? kUs : margin);
  const bool killed = spec.kill_lines && spec.stop != StopKind::kCut && spec.stop != StopKind::kFinished;
  for (int r = 0; r < ranks; ++r) {
    Worker& w = *worker[r];
    const bool dead = std::find(truth->dead_workers.begin(), truth->dead_workers.end(), r) != truth->dead_workers.end();
    w.end.lines = line;
    if (killed && !dead) w.end.stamped = truth->kill_time;
    // A copy taken while a line was being written ends inside it.
    w.end.cut_mid_line = spec.stop == StopKind::kCut && random.Next() < 0.05;
    for (InFlightJob& job : w.in_flight) job.seen = std::min(truth->kill_time, job.start + (truth->kill_time - job.start) / 2);
  }
  // Whether the logs time the stop: the watchdog saw a dead stage's job, or
  // a live log goes on past when that job should have ended by more than its
  // length (and, across machines, the few ms clocks may disagree by).
  constexpr Nanos kAcrossMachines = 7'000'000;
  for (int replica = 0; replica < run.dp && stops; ++replica)
    for (int s = 0; s < p; ++s) {
      const Lane& lane = lanes[replica][s];
      if (!lane.dead || !lane.stopped) continue;
      const Worker& own = *worker[rank_of(replica, s, 0)];
      truth->evidence = truth->evidence || !own.in_flight.empty();
      if (own.jobs.empty()) continue;  // no time of its own: only the watchdog tells it
      for (int r = 0; r < ranks; ++r) {
        const Worker& w = *worker[r];
        if (std::find(truth->dead_workers.begin(), truth->dead_workers.end(), r) != truth->dead_workers.end()) continue;
        // Dead inside an all-reduce every member reached: only the other
        // members' logs going on tell it from the collective hanging.
        const bool in_all_reduce = lane.next_type == "optimizer" && lane.ready < stop_time;
        if (in_all_reduce && !spec.barrier && (r / run.mp) % p != s) continue;
        const Nanos end = std::max(w.jobs.empty() ? 0 : w.jobs.back().end, w.end.stamped);
        const Nanos over = end - (w.machine == own.machine ? 0 : kAcrossMachines) - (lane.ready + lane.usual);
        truth->evidence = truth->evidence || over > lane.usual + lane.usual / 4;
      }
    }
  // Step spans from the jobs, as the step finder would find them.
  std::map<std::int64_t, StepSpan> spans;
  for (const Worker* w : worker)
    for (const Job& job : w->jobs) {
      auto [it, inserted] = spans.try_emplace(job.step, StepSpan{job.step, job.start, job.end});
      it->second.start = std::min(it->second.start, job.start);
      it->second.end = std::max(it->second.end, job.end);
    }
  for (const auto& [step, span] : spans) t.steps.push_back(span);
  t.step_source = StepSource::kHeuristic;
  for (Worker* w : worker) std::sort(w->jobs.begin(), w->jobs.end(), StartsBefore);
  return t;
}

}  // namespace jobviz::sim

