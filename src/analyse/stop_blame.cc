#include "analyse/stop_blame.h"

#include <algorithm>
#include <tuple>

#include "model/time_value.h"

namespace jobviz {

namespace {

constexpr Nanos kMicro = 1000;
constexpr Nanos kMilli = 1000 * kMicro;
// Log ends on different machines are compared through their aligned clocks,
// which may still be off by a few milliseconds (docs/clock-alignment.md).
constexpr Nanos kClockSlack = 5 * kMilli;

}  // namespace

// Each worker's last timed line (its last job's end, or a later
// glog-stamped line), and how far before the latest other log it ends.
void EndWorkers(const GraphLanes& graph, StopReport* r) {
  r->workers.resize(graph.workers.size());
  Nanos latest = 0, second = 0;
  for (size_t w = 0; w < graph.workers.size(); ++w) {
    const Worker& worker = *graph.workers[w];
    WorkerEnding& e = r->workers[w];
    e.worker = static_cast<std::uint32_t>(w);
    e.no_jobs = worker.jobs.empty();
    e.last_time = LastJobEnd(worker);
    e.stamped = worker.end.stamped != 0 && worker.end.stamped >= e.last_time;
    e.last_time = std::max(e.last_time, worker.end.stamped);
    e.lines = worker.end.lines;
    e.last_line = worker.end.last_line;
    e.cut_mid_line = worker.end.cut_mid_line;
    if (e.last_time >= latest) {
      second = latest;
      latest = e.last_time;
    } else {
      second = std::max(second, e.last_time);
    }
  }
  for (WorkerEnding& e : r->workers)
    if (e.last_time > 0) e.before_others = std::max<Nanos>(0, (e.last_time == latest ? second : latest) - e.last_time);
}

namespace {

// Follows each waiting lane to the lane its chain of waits ends at; counts
// its workers there.
void CountWaiters(StopReport* r) {
  for (LaneStop& lane : r->lanes) lane.waiting_workers = 0;
  for (const LaneStop& lane : r->lanes) {
    if (lane.state != LaneState::kWaiting) continue;
    int at = lane.waits_on;
    for (size_t hops = 0; at >= 0 && r->lanes[at].state == LaneState::kWaiting && hops < r->lanes.size(); ++hops)
      at = r->lanes[at].waits_on;
    if (at >= 0 && r->lanes[at].state != LaneState::kWaiting) r->lanes[at].waiting_workers += lane.workers.size();
  }
}

// The workers by how late their logs end, latest first: all of them, and
// each machine's, so that "the latest log but a lane's own" is a few steps.
struct LogEnds {
  std::vector<std::uint32_t> all;
  std::vector<std::vector<std::uint32_t>> by_machine;
  LogEnds(const GraphLanes& graph, const StopReport& r) {
    for (const WorkerEnding& e : r.workers) all.push_back(e.worker);
    std::stable_sort(all.begin(), all.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return r.workers[a].last_time > r.workers[b].last_time; });
    for (const std::uint32_t w : all) {
      const size_t m = static_cast<size_t>(graph.workers[w]->machine);
      if (by_machine.size() <= m) by_machine.resize(m + 1);
      by_machine[m].push_back(w);
    }
  }
};

Nanos LatestOutside(const std::vector<std::uint32_t>& order, const StopReport& r, const LaneStop& lane) {
  for (const std::uint32_t w : order)
    if (std::find(lane.workers.begin(), lane.workers.end(), w) == lane.workers.end()) return r.workers[w].last_time;
  return 0;
}

// The latest log end of the workers outside a lane, as far as clocks can
// tell: on its own machine (one clock), or on any less kClockSlack.
Nanos OthersEnd(const GraphLanes& graph, const LogEnds& ends, const StopReport& r, const LaneStop& lane) {
  const size_t machine = static_cast<size_t>(graph.workers[lane.workers.front()]->machine);
  const Nanos same = machine < ends.by_machine.size() ? LatestOutside(ends.by_machine[machine], r, lane) : 0;
  return std::max(same, LatestOutside(ends.all, r, lane) - kClockSlack);
}

// A stuck lane stopped (rather than being cut off mid-job with every other
// log) when the others' logs go on well past when its job should have
// ended: twice its usual length, so that one slow job is not a stop. A job
// no line shows the length of (an optimizer no worker reached) is overdue
// only when the lane's own log went silent while the others' went on.
bool Overdue(const GraphLanes& graph, const LogEnds& ends, const StopReport& r, const LaneStop& lane) {
  if (lane.in_flight) return true;  // the watchdog waited its stall_after and saw no end
  if (lane.usual < 0)
    return std::any_of(lane.workers.begin(), lane.workers.end(),
                       [&](std::uint32_t w) { return r.workers[w].before_others > kMilli + kClockSlack; });
  return OthersEnd(graph, ends, r, lane) - (lane.ready + lane.usual) > std::max(2 * lane.usual, kMilli);
}

std::string Since(const StopReport& r, Nanos t) { return FormatSinceStart(t - r.run_start); }

std::string Where(const Timeline& timeline, const GraphLanes& graph, const LaneStop& lane, std::uint32_t w) {
  const Worker& worker = *graph.workers[w];
  std::string text = WorkerName(timeline, worker) + " (stage " + std::to_string(lane.stage);
  if (timeline.topology.peer_degree() > 1) text += ", mp " + std::to_string(worker.role.peer);
  if (timeline.topology.replicas() > 1) text += ", replica " + std::to_string(lane.replica);
  return text + ")";
}

std::string StoppedSentence(const Timeline& timeline, const GraphLanes& graph, const StopReport& r) {
  const LaneStop& lane = r.lanes[static_cast<size_t>(r.first)];
  std::string s = "The run stopped in " + StepName(r.step) + ": " + Where(timeline, graph, lane, r.first_worker);
  if (lane.last.known()) s += " finished " + lane.last.type.str() + " " + std::to_string(lane.last.micro_batch) +
                             (lane.last.step != r.step ? " of " + StepName(lane.last.step) : "") + " at " +
                             Since(r, lane.last.end);
  else s += " finished no job";
  if (lane.in_flight) {
    s += " and was " + std::string(lane.in_flight_started ? "stuck in " : "waiting to start ") + lane.next.type.str() +
         " " + std::to_string(lane.next.micro_batch) + " for " + FormatDuration(lane.in_flight_seen - lane.in_flight_since) +
         " when its log ends" + (lane.in_flight_started ? "" : " (its stream blocked behind earlier work)");
  } else if (lane.next.known()) {
    s += " and never finished " + lane.next.type.str() + " " + std::to_string(lane.next.micro_batch);
    if (lane.state == LaneState::kStuck && !lane.input.empty())
      s += ", whose input (" + lane.input + ") had arrived at " + Since(r, lane.input_arrived);
    else if (lane.state == LaneState::kStuck)
      s += ", which waits for no other stage";
  } else {
    s += "; its next job is not known (no earlier step to read it from)";
  }
  size_t waiting = lane.waiting_workers;
  for (const int l : r.stopped_with) waiting += r.lanes[l].waiting_workers;
  if (!r.stopped_with.empty()) {
    const Worker& first = *graph.workers[r.first_worker];
    size_t with = 0;
    for (const int l : r.stopped_with) with += r.lanes[l].workers.size();
    const size_t on_machine = timeline.machines[static_cast<size_t>(first.machine)].workers.size();
    s += "; with it " + std::to_string(r.stopped_with.size()) + " more stage" + (r.stopped_with.size() == 1 ? "" : "s") +
         " of " + timeline.machines[static_cast<size_t>(first.machine)].name + " stopped" +
         (with + lane.workers.size() >= on_machine ? " (every worker of the machine: did it fail?)" : "");
  }
  s += "; " + std::to_string(waiting) + (waiting == 1 ? " worker" : " workers") + " then waited on " +
       (r.stopped_with.empty() ? "it." : "them.");
  const WorkerEnding& end = r.workers[r.first_worker];
  if (end.before_others >= 100 * kMicro) s += " Its log ends " + FormatDuration(end.before_others) + " before the others'.";
  if (end.cut_mid_line) s += " Its log ends inside a line (killed while writing?).";
  return s;
}

std::string CutSentence(const StopReport& r) {
  Nanos first = 0, last = 0;
  bool any = false;
  for (const WorkerEnding& e : r.workers) {
    if (e.last_time == 0) continue;
    first = any ? std::min(first, e.last_time) : e.last_time;
    last = std::max(last, e.last_time);
    any = true;
  }
  return "Every log ends mid-" + StepName(r.step) + " at about the same time (within " + FormatDuration(last - first) +
         "): still running, or copied early? No worker stands out.";
}

}  // namespace

void BlameStop(const Timeline& timeline, const GraphLanes& graph, StopReport* r) {
  CountWaiters(r);
  const LogEnds ends(graph, *r);
  // The stuck lane most others wait on; among equals (stages stuck together
  // in one collective), the one whose log went silent first, then the one
  // stuck longest.
  const auto silent_for = [&](const LaneStop& lane) {
    Nanos longest = 0;
    for (const std::uint32_t w : lane.workers) longest = std::max(longest, r->workers[w].before_others);
    return longest;
  };
  int best = -1;
  for (size_t l = 0; l < r->lanes.size(); ++l) {
    const LaneStop& lane = r->lanes[l];
    if (lane.state != LaneState::kStuck || !Overdue(graph, ends, *r, lane)) continue;
    if (best < 0) {
      best = static_cast<int>(l);
      continue;
    }
    const LaneStop& b = r->lanes[best];
    // Logs that went silent within a millisecond of each other went
    // together (one machine): equal here. Of those, a lane at a closing job
    // no line shows may be waiting in an all-reduce for one still in its passes.
    Nanos silent_lane = silent_for(lane), silent_best = silent_for(b);
    if (silent_lane - silent_best <= kMilli && silent_best - silent_lane <= kMilli)
      silent_lane = silent_best = std::max(silent_lane, silent_best);
    const auto seen_job = [](const LaneStop& x) { return x.in_flight || x.usual >= 0; };
    if (std::make_tuple(lane.waiting_workers, silent_lane, seen_job(lane), -lane.ready) >
        std::make_tuple(b.waiting_workers, silent_best, seen_job(b), -b.ready))
      best = static_cast<int>(l);
  }
  if (best < 0) {
    // No overdue job: a log that went silent well before the others' names
    // its lane; one that had finished what its logs show, only by a stamped
    // line (a job's end alone comes early on a stage that simply finished).
    Nanos longest = kMilli + kClockSlack;
    for (const WorkerEnding& e : r->workers) {
      if (e.before_others <= longest || e.no_jobs) continue;
      for (size_t l = 0; l < r->lanes.size(); ++l)
        if ((r->lanes[l].state != LaneState::kFinished || e.stamped) &&
            std::find(r->lanes[l].workers.begin(), r->lanes[l].workers.end(), e.worker) != r->lanes[l].workers.end()) {
          best = static_cast<int>(l);
          longest = e.before_others;
        }
    }
  }
  if (best < 0) {
    r->kind = StopKind::kCutTogether;
    r->sentence = CutSentence(*r);
    return;
  }
  r->kind = StopKind::kStopped;
  r->first = best;
  const int machine = graph.workers[r->lanes[best].workers.front()]->machine;
  // Stages of its machine stuck too, whose logs went silent with its own.
  const Nanos first_silent = silent_for(r->lanes[best]);
  for (size_t l = 0; l < r->lanes.size(); ++l)
    if (static_cast<int>(l) != best && r->lanes[l].state == LaneState::kStuck && Overdue(graph, ends, *r, r->lanes[l]) &&
        graph.workers[r->lanes[l].workers.front()]->machine == machine &&
        (first_silent <= kMilli + kClockSlack || silent_for(r->lanes[l]) + kMilli >= first_silent))
      r->stopped_with.push_back(static_cast<int>(l));
  r->first_worker = r->lanes[best].workers.front();
  // Among peers in the same place, the one whose log ended first.
  for (const std::uint32_t w : r->lanes[best].workers)
    if (r->workers[w].before_others > r->workers[r->first_worker].before_others) r->first_worker = w;
  r->sentence = StoppedSentence(timeline, graph, *r);
}

}  // namespace jobviz
