#include "analyse/stop_sentence.h"

#include <algorithm>
#include <cstdio>

#include "model/time_value.h"

namespace jobviz {

namespace {

constexpr size_t kRanksNamed = 8;
constexpr Nanos kSecond = 1'000'000'000;

std::string Since(const StopReport& r, Nanos t) { return FormatSinceStart(t - r.run_start); }

std::string JobName(const StopJob& job) { return job.type.str() + " " + std::to_string(job.micro_batch); }

std::string Workers(size_t n) { return std::to_string(n) + (n == 1 ? " worker" : " workers"); }

// "finished backward 6 at +25.568407 ms (UTC ..., ... in its log's stamps)".
std::string LastJobText(const Timeline& timeline, const Worker& worker, const StopReport& r, const LaneStop& lane) {
  if (!lane.last.known()) return "finished no job";
  return "finished " + JobName(lane.last) + (lane.last.step != r.step ? " of " + StepName(lane.last.step) : "") + " at " +
         Since(r, lane.last.end) + " (" + WallClockText(timeline, worker, lane.last.end) + ")";
}

// What it never finished, and why that is its own doing.
std::string NextJobText(const StopReport& r, const LaneStop& lane) {
  if (lane.in_flight)
    return std::string(lane.in_flight_started ? "was stuck in " : "was waiting to start ") + JobName(lane.next) + " for " +
           FormatDuration(lane.in_flight_seen - lane.in_flight_since) + " when its log ends (libjobviz's watchdog line" +
           (lane.in_flight_started ? ")" : "; its stream blocked behind earlier work)");
  if (!lane.next.known()) return "its next job is not known (no earlier step to read it from)";
  std::string s = "never finished " + JobName(lane.next);
  if (!lane.input.empty()) s += ", whose input (" + lane.input + ") had arrived at " + Since(r, lane.input_arrived);
  else s += ", which waits for no other stage";
  return s;
}

// Lanes waiting on `first` through the gradients' all-reduce: it never reached it.
bool AllReduceWaitsOn(const StopReport& r, int first) {
  return std::any_of(r.lanes.begin(), r.lanes.end(), [&](const LaneStop& lane) {
    return lane.state == LaneState::kWaiting && lane.waits_on == first && lane.input.starts_with("the gradients of");
  });
}

std::string WaitersText(const Timeline& timeline, const GraphLanes& graph, const StopReport& r) {
  const LaneStop& lane = r.lanes[static_cast<size_t>(r.first)];
  size_t waiting = lane.waiting_workers;
  for (const int l : r.stopped_with) waiting += r.lanes[l].waiting_workers;
  std::string s;
  if (!r.stopped_with.empty()) {
    const Worker& first = *graph.workers[r.first_worker];
    const Machine& machine = timeline.machines[static_cast<size_t>(first.machine)];
    size_t with = 0;
    for (const int l : r.stopped_with) with += r.lanes[l].workers.size();
    s += "; with it " + std::to_string(r.stopped_with.size()) + " more stage" + (r.stopped_with.size() == 1 ? "" : "s") +
         " of " + machine.name + " stopped" +
         (with + lane.workers.size() >= machine.workers.size() ? " (every worker of the machine: did it fail?)" : "");
  }
  if (AllReduceWaitsOn(r, r.first)) s += "; it never reached " + StepName(r.step) + "'s gradient all-reduce";
  return s + "; " + Workers(waiting) + " then waited on " + (r.stopped_with.empty() ? "it." : "them.");
}

std::string StoppedSentence(const Timeline& timeline, const GraphLanes& graph, const StopReport& r) {
  const LaneStop& lane = r.lanes[static_cast<size_t>(r.first)];
  const Worker& worker = *graph.workers[r.first_worker];
  std::string s = (r.hung && r.overdue == 0 && !lane.in_flight ? "The job hung in " : "The run stopped in ") +
                  StepName(r.step) + ": " + StopWorkerName(timeline, worker, lane) + " " +
                  LastJobText(timeline, worker, r, lane) + " and " + NextJobText(r, lane) + WaitersText(timeline, graph, r);
  if (r.overdue > 0) s += " The others' logs go on " + FormatDuration(r.overdue) + " past when that job should have ended.";
  else if (r.hung && !lane.in_flight) s += " (--hung: nothing in the logs times the stop; the job was known to hang.)";
  if (r.workers[r.first_worker].cut_mid_line) s += " Its log ends inside a line (killed while writing?).";
  return s;
}

std::string SuspectSentence(const Timeline& timeline, const GraphLanes& graph, const StopReport& r) {
  const LaneStop& lane = r.lanes[static_cast<size_t>(r.first)];
  const Worker& worker = *graph.workers[r.first_worker];
  size_t stages = 0;
  for (const LaneStop& other : r.lanes) stages += other.state == LaneState::kWaiting;
  std::string s = "Nothing in the logs times a stop: every log ends within its jobs' own length. If the job hung, it hung in " +
                  StepName(r.step) + " in " + StopWorkerName(timeline, worker, lane) + ": it " +
                  LastJobText(timeline, worker, r, lane) + " and " + NextJobText(r, lane) + ", and " +
                  (stages == 0 ? std::string("no other stage is inside a job")
                               : "all " + std::to_string(stages) + " other unfinished stage" + (stages == 1 ? "" : "s") +
                                     " wait on it") +
                  ". If the logs were copied while it ran, nobody is to blame (--hung, when you know it hung).";
  return s;
}

// "ranks 0, 8, 16, 24" (the first few), or worker names where ranks are unknown.
std::string GroupRanks(const Timeline& timeline, const GraphLanes& graph, const StopReport& r) {
  std::vector<std::string> names;
  size_t count = 0;
  for (const LaneStop& lane : r.lanes) {
    if (r.all_reduce_stage >= 0 && lane.stage != r.all_reduce_stage) continue;
    for (const std::uint32_t w : lane.workers) {
      ++count;
      if (names.size() == kRanksNamed) continue;
      const Worker& worker = *graph.workers[w];
      names.push_back(worker.role.rank >= 0 ? std::to_string(worker.role.rank) : WorkerName(timeline, worker));
    }
  }
  std::string text = std::to_string(count) + " workers: ";
  for (size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i];
  return text + (count > names.size() ? ", ..." : "");
}

std::string AllReduceSentence(const Timeline& timeline, const GraphLanes& graph, const StopReport& r) {
  const std::string scope = r.all_reduce_stage < 0 ? "the global gradient all-reduce (every stage and replica; "
                                                   : "the gradient all-reduce of stage " +
                                                         std::to_string(r.all_reduce_stage) + "'s replicas (";
  const std::string which = scope + GroupRanks(timeline, graph, r) + ")";
  if (r.hedged)
    return "Every member of " + StepName(r.step) + "'s " + which.substr(4) +
           " reached it and none came out. If the job hung, it hung inside that collective: a collective or network "
           "fault (NCCL, the links between these ranks). If the logs were copied while it ran, nobody is to blame.";
  return "In " + StepName(r.step) + ", " + which + " never completed: every member reached it (" +
         (r.overdue > 0 ? "the logs go on " + FormatDuration(r.overdue) + " past its usual end"
          : r.hung      ? std::string("--hung")
                        : std::string("libjobviz's watchdog saw it run past stall_after")) +
         "). A collective or network fault: look at NCCL and the links between these ranks.";
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
  const std::string inside =
      r.inside_jobs == 0 ? "" : std::to_string(r.inside_jobs) + (r.inside_jobs == 1 ? " stage was" : " stages were") + " inside a job";
  if (r.hung)
    return "The job hung in " + StepName(r.step) + " (--hung), but " + (inside.empty() ? "no stage was inside a job" : inside) +
           " when the logs end and none holds every other up: nobody is named.";
  return "Every log ends mid-" + StepName(r.step) + " (within " + FormatDuration(last - first) +
         " of each other) and nothing in them times a stop: still running, or copied early? Nobody is to blame" +
         (inside.empty() ? "." : " (" + inside + ").");
}

}  // namespace

std::string StopWorkerName(const Timeline& timeline, const Worker& worker, const LaneStop& lane) {
  std::string text = WorkerName(timeline, worker) + " (stage " + std::to_string(lane.stage);
  if (timeline.topology.peer_degree() > 1) text += ", mp " + std::to_string(worker.role.peer);
  if (timeline.topology.replicas() > 1) text += ", replica " + std::to_string(lane.replica);
  if (worker.role.rank >= 0) text += ", rank " + std::to_string(worker.role.rank);
  const std::string_view host = WorkerHost(worker);
  if (!host.empty() && host != timeline.machines[static_cast<size_t>(worker.machine)].name)
    text += ", host " + std::string(host);
  return text + ")";
}

std::string WallClockText(const Timeline& timeline, const Worker& worker, Nanos aligned) {
  // Its own clock: the aligned time plus its machine's offset from the reference.
  const Nanos own = SaturatingAdd(aligned, timeline.machines[static_cast<size_t>(worker.machine)].clock_offset);
  std::string text = FormatUtcNanos(own);
  if (!worker.end.zone_offset) return text;
  const Nanos local = SaturatingAdd(own, *worker.end.zone_offset);
  const Nanos of_day = ((local % (86'400 * kSecond)) + 86'400 * kSecond) % (86'400 * kSecond);
  char stamp[48];
  std::snprintf(stamp, sizeof stamp, "%02lld:%02lld:%02lld.%06lld", static_cast<long long>(of_day / (3600 * kSecond)),
                static_cast<long long>(of_day / (60 * kSecond) % 60), static_cast<long long>(of_day / kSecond % 60),
                static_cast<long long>(of_day % kSecond / 1000));
  return text + ", " + stamp + " in its log's stamps";
}

std::string StopSentence(const Timeline& timeline, const GraphLanes& graph, const StopReport& r) {
  switch (r.kind) {
    case StopKind::kStopped: return StoppedSentence(timeline, graph, r);
    case StopKind::kSuspect: return SuspectSentence(timeline, graph, r);
    case StopKind::kAllReduce: return AllReduceSentence(timeline, graph, r);
    case StopKind::kCutTogether: return CutSentence(r);
    case StopKind::kFinished:
    case StopKind::kRunning:
    case StopKind::kBetweenSteps:
    case StopKind::kUnknown: return r.sentence;
  }
  return r.sentence;
}

}  // namespace jobviz
