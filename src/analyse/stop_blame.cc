#include "analyse/stop_blame.h"

#include <algorithm>
#include <tuple>

#include "analyse/stop_sentence.h"

namespace jobviz {

namespace {

constexpr Nanos kMicro = 1000;
constexpr Nanos kMilli = 1000 * kMicro;
// Log ends on different machines are compared through their aligned clocks,
// which may still be off by a few milliseconds (docs/clock-alignment.md).
// On one machine the workers share a clock, and nothing is taken off.
constexpr Nanos kClockSlack = 5 * kMilli;

}  // namespace

// Each worker's last timed line (its last job's end, or a later
// glog-stamped line), and how far before the latest other log it ends. A
// stamped line earlier than the log's own last job does not end the log
// (a noise line stamped before it was printed).
void EndWorkers(const std::vector<const Worker*>& workers, const std::vector<Nanos>& last_job_ends, StopReport* r) {
  r->workers.resize(workers.size());
  Nanos latest = 0, second = 0;
  for (size_t w = 0; w < workers.size(); ++w) {
    const Worker& worker = *workers[w];
    WorkerEnding& e = r->workers[w];
    e.worker = static_cast<std::uint32_t>(w);
    e.no_jobs = worker.jobs.empty();
    e.last_time = last_job_ends.size() == workers.size() ? last_job_ends[w] : LastJobEnd(worker);
    e.stamped = worker.end.stamped != 0 && worker.end.stamped >= e.last_time;
    if (e.stamped) e.last_time = worker.end.stamped;
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
  for (size_t l = 0; l < r->lanes.size(); ++l) {
    if (r->lanes[l].state != LaneState::kWaiting) continue;
    const int at = WaitChainEnd(*r, static_cast<int>(l));
    if (at >= 0 && r->lanes[at].state != LaneState::kWaiting) r->lanes[at].waiting_workers += r->lanes[l].workers.size();
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

// The length a lane's next job should take: as it took in its earlier step,
// or, where no line shows that job (an optimizer no worker reached), the
// longest job the lane ran: the longer, the less it is blamed.
Nanos UsualLength(const GraphLanes& graph, const LaneStop& lane) {
  if (lane.usual >= 0) return std::max<Nanos>(lane.usual, 1);
  Nanos longest = 1;
  for (const std::uint32_t w : lane.workers)
    for (const Job& job : graph.workers[w]->jobs) longest = std::max(longest, job.end - job.start);
  return longest;
}

// Evidence that a lane inside a job stopped rather than was cut off mid-job
// with every other log: the others' logs go on past when that job should
// have ended (its inputs' arrival plus its usual length) by more than its
// usual length, on its own machine's clock or across machines less what
// clocks may disagree by. How far past; 0 when not so. Relative to the job,
// never a fixed time: a copy of a live run ends every log at its last line,
// and a stage idle in the pipeline's bubble is quiet for a while in it.
// A lane that finished no job has no time of its own to be overdue from (a
// copy taken as the run starts has ranks not yet at their first job).
Nanos OverdueBy(const GraphLanes& graph, const LogEnds& ends, const StopReport& r, const LaneStop& lane) {
  if (!lane.last.known()) return 0;
  const Nanos usual = UsualLength(graph, lane);
  const Nanos over = OthersEnd(graph, ends, r, lane) - (lane.ready + usual);
  return over > usual ? over : 0;
}

// Whether the logs show the lane stopped: overdue, or libjobviz's watchdog
// waited its stall_after and saw the job it had everything for not end.
bool Evidence(const GraphLanes& graph, const LogEnds& ends, const StopReport& r, const LaneStop& lane) {
  return lane.in_flight || OverdueBy(graph, ends, r, lane) > 0;
}

Nanos SilentFor(const StopReport& r, const LaneStop& lane) {
  Nanos longest = 0;
  for (const std::uint32_t w : lane.workers) longest = std::max(longest, r.workers[w].before_others);
  return longest;
}

// The stuck lane with evidence that most others wait on; among equals
// (stages stuck together in one collective), the one whose log went silent
// first, then the one stuck longest. -1: none has evidence.
int FirstWithEvidence(const GraphLanes& graph, const LogEnds& ends, const StopReport& r) {
  int best = -1;
  for (size_t l = 0; l < r.lanes.size(); ++l) {
    const LaneStop& lane = r.lanes[l];
    if (lane.state != LaneState::kStuck || !Evidence(graph, ends, r, lane)) continue;
    if (best < 0) {
      best = static_cast<int>(l);
      continue;
    }
    const LaneStop& b = r.lanes[best];
    // Logs that went silent within a millisecond of each other went
    // together (one machine): equal here. Of those, a lane at a closing job
    // no line shows may be waiting in an all-reduce for one still in its passes.
    Nanos silent_lane = SilentFor(r, lane), silent_best = SilentFor(r, b);
    if (silent_lane - silent_best <= kMilli && silent_best - silent_lane <= kMilli)
      silent_lane = silent_best = std::max(silent_lane, silent_best);
    const auto seen_job = [](const LaneStop& x) { return x.in_flight || x.usual >= 0; };
    if (std::make_tuple(lane.waiting_workers, silent_lane, seen_job(lane), -lane.ready) >
        std::make_tuple(b.waiting_workers, silent_best, seen_job(b), -b.ready))
      best = static_cast<int>(l);
  }
  return best;
}

void NameFirst(const GraphLanes& graph, const LogEnds& ends, int first, StopReport* r,
               const std::vector<int>& with = {}) {
  r->first = first;
  for (const int l : with)
    if (l != first) r->stopped_with.push_back(l);
  const LaneStop& lane = r->lanes[static_cast<size_t>(first)];
  r->overdue = lane.in_flight ? 0 : OverdueBy(graph, ends, *r, lane);
  const int machine = graph.workers[lane.workers.front()]->machine;
  // Stages of its machine stuck too with evidence, whose logs went silent with its own.
  const Nanos first_silent = SilentFor(*r, lane);
  if (r->kind == StopKind::kStopped && !r->hung && with.empty())
    for (size_t l = 0; l < r->lanes.size(); ++l)
      if (static_cast<int>(l) != first && r->lanes[l].state == LaneState::kStuck &&
          Evidence(graph, ends, *r, r->lanes[l]) && graph.workers[r->lanes[l].workers.front()]->machine == machine &&
          (first_silent <= kMilli + kClockSlack || SilentFor(*r, r->lanes[l]) + kMilli >= first_silent))
        r->stopped_with.push_back(static_cast<int>(l));
  r->first_worker = lane.workers.front();
  // Among peers in the same place, the one whose log ended first.
  for (const std::uint32_t w : lane.workers)
    if (r->workers[w].before_others > r->workers[r->first_worker].before_others) r->first_worker = w;
}

// Every lane with workers is one of `lanes`: all in an all-reduce at once
// is the global one, whatever earlier steps showed (clocks may hide it).
bool EveryLaneIn(const StopReport& r, const std::vector<int>& lanes) {
  size_t with_workers = 0;
  for (const LaneStop& lane : r.lanes) with_workers += !lane.workers.empty();
  return lanes.size() == with_workers;
}

// Stuck lanes all of one machine (every one of them, when a machine died).
bool OneMachine(const GraphLanes& graph, const StopReport& r, const std::vector<int>& lanes) {
  const auto machine = [&](int l) { return graph.workers[r.lanes[static_cast<size_t>(l)].workers.front()]->machine; };
  return !lanes.empty() && std::all_of(lanes.begin(), lanes.end(), [&](int l) { return machine(l) == machine(lanes.front()); });
}

// The lane of `lanes` most others wait on.
int MostWaitedOn(const StopReport& r, const std::vector<int>& lanes) {
  int best = lanes.front();
  for (const int l : lanes)
    if (r.lanes[static_cast<size_t>(l)].waiting_workers > r.lanes[static_cast<size_t>(best)].waiting_workers) best = l;
  return best;
}

// A member of an all-reduce every member reached whose log went silent
// while the others' went on past its usual end by more than that: it died
// inside the collective, and the others waited in it. -1: none, or all.
int SilentInCollective(const GraphLanes& graph, const LogEnds& ends, const StopReport& r, const std::vector<int>& lanes) {
  int best = -1;
  size_t silent = 0;
  for (const int l : lanes) {
    const LaneStop& lane = r.lanes[static_cast<size_t>(l)];
    const Nanos usual = UsualLength(graph, lane);
    // A rank whose watchdog still wrote lines was alive: its log's end says nothing.
    if (lane.in_flight || OverdueBy(graph, ends, r, lane) == 0 || SilentFor(r, lane) <= usual + kClockSlack) continue;
    ++silent;
    if (best < 0 || SilentFor(r, lane) > SilentFor(r, r.lanes[static_cast<size_t>(best)])) best = l;
  }
  return silent < lanes.size() ? best : -1;
}

// Every stage that is not done is `lane` or waits on it, directly or through a chain.
bool AllWaitOn(const StopReport& r, const std::vector<int>& ends) {
  size_t open = 0, led = 0;
  for (const LaneStop& lane : r.lanes) {
    if (lane.state == LaneState::kWaiting) open += lane.workers.size();
    if (lane.state == LaneState::kUnknown) return false;
  }
  for (const int l : ends) led += r.lanes[static_cast<size_t>(l)].waiting_workers;
  return led == open;
}

// Lanes in one all-reduce: the global one, or one stage's replicas'.
bool OneGroup(const StopReport& r, const std::vector<int>& lanes) {
  return r.all_reduce_global || EveryLaneIn(r, lanes) || std::all_of(lanes.begin(), lanes.end(), [&](int l) {
           return r.lanes[static_cast<size_t>(l)].stage == r.lanes[static_cast<size_t>(lanes.front())].stage;
         });
}

}  // namespace

void BlameStop(const Timeline& timeline, const GraphLanes& graph, StopOptions options, StopReport* r) {
  CountWaiters(r);
  r->hung = options.hung;
  const LogEnds ends(graph, *r);
  std::vector<int> stuck, collective;
  for (size_t l = 0; l < r->lanes.size(); ++l) {
    if (r->lanes[l].state == LaneState::kStuck) stuck.push_back(static_cast<int>(l));
    if (r->lanes[l].state == LaneState::kInAllReduce) collective.push_back(static_cast<int>(l));
  }
  if (const int first = FirstWithEvidence(graph, ends, *r); first >= 0) {
    r->kind = StopKind::kStopped;
    NameFirst(graph, ends, first, r);
  } else if (const int silent = SilentInCollective(graph, ends, *r, collective);
             silent >= 0 && stuck.empty() && OneGroup(*r, collective)) {
    r->kind = StopKind::kStopped;
    NameFirst(graph, ends, silent, r);
  } else if (collective.empty() && (stuck.size() == 1 || OneMachine(graph, *r, stuck)) && AllWaitOn(*r, stuck)) {
    // Nothing times the stop, and one stage (or one machine's) holds every
    // other up: if the job hung, it hung there; a copy of a live run can
    // look the same.
    r->kind = options.hung ? StopKind::kStopped : StopKind::kSuspect;
    r->hedged = !options.hung;
    NameFirst(graph, ends, MostWaitedOn(*r, stuck), r, stuck.size() > 1 ? stuck : std::vector<int>{});
  } else if (stuck.empty() && !collective.empty() && OneGroup(*r, collective) && AllWaitOn(*r, collective)) {
    r->kind = StopKind::kAllReduce;
    r->all_reduce_stage = r->all_reduce_global || EveryLaneIn(*r, collective)
                              ? -1
                              : r->lanes[static_cast<size_t>(collective.front())].stage;
    for (const int l : collective) r->overdue = std::max(r->overdue, OverdueBy(graph, ends, *r, r->lanes[static_cast<size_t>(l)]));
    const bool watched = std::any_of(collective.begin(), collective.end(),
                                     [&](int l) { return r->lanes[static_cast<size_t>(l)].in_flight; });
    r->hedged = r->overdue == 0 && !watched && !options.hung;
  } else {
    r->kind = StopKind::kCutTogether;
    r->inside_jobs = stuck.size() + collective.size();
  }
  r->sentence = StopSentence(timeline, graph, *r);
}

}  // namespace jobviz
