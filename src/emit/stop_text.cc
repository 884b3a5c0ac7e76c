#include "emit/stop_text.h"

#include <algorithm>
#include <map>
#include <set>

#include "model/time_value.h"

namespace jobviz {

namespace {

constexpr size_t kStagesOnStderr = 8;
constexpr size_t kSilentLogsShown = 3;
// A log ending this long before the others' is worth a line: more than
// the clocks of two machines may still disagree by after alignment.
constexpr Nanos kSilentAfter = 5'000'000;

std::string LaneWorkers(const LaneStop& lane, const std::vector<const Worker*>& workers, const Timeline& timeline) {
  if (lane.workers.empty()) return "";
  std::string text = WorkerName(timeline, *workers[lane.workers.front()]);
  if (lane.workers.size() > 1) text += " +" + std::to_string(lane.workers.size() - 1) + " peers";
  return text;
}

std::string StateText(const LaneStop& lane) {
  switch (lane.state) {
    case LaneState::kFinished: return "finished";
    case LaneState::kWaiting:
      if (lane.in_flight)  // inside the job, blocked on its input (a receive, an all-reduce)
        return "waiting for " + lane.input + (lane.in_flight_started ? ", inside it for " : ", to start it for ") +
               FormatDuration(lane.in_flight_seen - lane.in_flight_since) + " (libjobviz's in-flight line)";
      return "waiting for " + lane.input;
    case LaneState::kStuck:
      if (lane.in_flight)
        return std::string(lane.in_flight_started ? "stuck in it for " : "waiting to start it for ") +
               FormatDuration(lane.in_flight_seen - lane.in_flight_since) + " (libjobviz's in-flight line)";
      return lane.input.empty() ? "had what it needed, never finished" : "had its input (" + lane.input + "), never finished";
    case LaneState::kInAllReduce:
      return "in the gradients' all-reduce, which every member reached" +
             std::string(lane.in_flight ? " (libjobviz's in-flight line: " + FormatDuration(lane.in_flight_seen - lane.in_flight_since) + ")" : "");
    case LaneState::kUnknown: return "next job not known";
  }
  return "";
}

std::string JobText(const StopJob& job) {
  return job.known() ? job.type.str() + " " + std::to_string(job.micro_batch) : "-";
}

std::string FirstMark(const StopReport& r, size_t l) {
  if (static_cast<int>(l) != r.first) return "";
  return r.kind == StopKind::kSuspect ? "SUSPECT (if it hung): " : "FIRST TO STOP: ";
}

// The lanes in the order a reader needs: the first to stop, its replica's
// stages, then the rest by replica and stage.
std::vector<size_t> LaneOrder(const StopReport& r) {
  std::vector<size_t> order(r.lanes.size());
  for (size_t l = 0; l < order.size(); ++l) order[l] = l;
  const int replica = r.first >= 0 ? r.lanes[static_cast<size_t>(r.first)].replica : -1;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const auto key = [&](size_t l) { return std::make_pair(static_cast<int>(l) != r.first, r.lanes[l].replica != replica); };
    return key(a) < key(b);
  });
  return order;
}

// The stages not listed, one line per cause: "504 stages of 63 replicas
// wait on replica 37 stage 2", "12 stages of 12 replicas finished".
std::vector<std::string> FoldedStages(const StopReport& r, const std::vector<size_t>& lanes) {
  struct Fold {
    size_t stages = 0;
    std::set<int> replicas;
  };
  std::map<std::pair<std::string, int>, Fold> folds;  // (state, the lane its waits lead to)
  for (const size_t l : lanes) {
    const LaneStop& lane = r.lanes[l];
    const int end = lane.state == LaneState::kWaiting ? WaitChainEnd(r, static_cast<int>(l)) : -1;
    Fold& fold = folds[{LaneStateKey(lane.state), end}];
    ++fold.stages;
    fold.replicas.insert(lane.replica);
  }
  std::vector<std::string> lines;
  for (const auto& [key, fold] : folds) {
    std::string line = std::to_string(fold.stages) + (fold.stages == 1 ? " more stage" : " more stages") + " of " +
                       std::to_string(fold.replicas.size()) + (fold.replicas.size() == 1 ? " replica " : " replicas ");
    if (key.second >= 0)
      line += "wait on replica " + std::to_string(r.lanes[key.second].replica) + " stage " +
              std::to_string(r.lanes[key.second].stage);
    else if (key.first == "waiting")
      line += "wait";
    else
      line += key.first == "in_all_reduce" ? "are in the all-reduce" : key.first == "stuck" ? "were inside a job" : key.first;
    lines.push_back(line);
  }
  return lines;
}

}  // namespace

std::vector<std::string> StopVerdictLines(const StopReport& r) {
  std::vector<std::string> lines;
  // A healthy run's report does not open with where it "stopped": the
  // summary JSON still says "finished" (stopped.kind) for scripts.
  if (r.kind == StopKind::kUnknown || r.kind == StopKind::kFinished) return lines;
  if (r.kind == StopKind::kRunning || r.kind == StopKind::kBetweenSteps) return {r.sentence};
  lines.push_back("Where the run stopped: " + r.sentence);
  if (r.unfinished_steps > 0)
    lines.push_back("Unfinished: " + std::to_string(r.unfinished_steps) + (r.unfinished_steps == 1 ? " step" : " steps") +
                    " from " + StepName(r.step) + " (" + std::to_string(r.unfinished_jobs) +
                    " jobs), drawn and marked \"unfinished\"; left out of step times, the bubble, critical paths, "
                    "what-ifs, slow workers and gates");
  return lines;
}

std::string FoldedStopText(const StopReport& r, size_t listed) {
  if (!ShowsStop(r) || r.lanes.size() <= listed) return "";
  const std::vector<size_t> order = LaneOrder(r);
  std::string text = "Besides the first " + std::to_string(listed) + " rows: ";
  const std::vector<std::string> folds =
      FoldedStages(r, std::vector<size_t>(order.begin() + static_cast<std::ptrdiff_t>(listed), order.end()));
  for (size_t i = 0; i < folds.size(); ++i) text += (i ? "; " : "") + folds[i];
  return text + ".";
}

std::vector<std::vector<std::string>> StopRows(const StopReport& r, const Timeline& timeline) {
  std::vector<std::vector<std::string>> rows;
  if (!ShowsStop(r)) return rows;
  const std::vector<const Worker*> workers = AllWorkers(timeline);
  rows.push_back({"replica", "stage", "workers", "last finished", "ended at", "next", "state"});
  for (const size_t l : LaneOrder(r)) {
    const LaneStop& lane = r.lanes[l];
    rows.push_back({std::to_string(lane.replica), std::to_string(lane.stage), LaneWorkers(lane, workers, timeline),
                    lane.last.known() ? JobText(lane.last) + " (" + StepName(lane.last.step) + ")" : "-",
                    lane.last.known() ? FormatSinceStart(lane.last.end - r.run_start) : "-", JobText(lane.next),
                    FirstMark(r, l) + StateText(lane)});
  }
  return rows;
}

// Workers whose log holds no job while others' do: a rank that never got
// going, or a file that is no worker's log. Said whether or not the run stopped.
std::string NoJobLines(const StopReport& r, const Timeline& timeline) {
  std::vector<const WorkerEnding*> empty;
  for (const WorkerEnding& e : r.workers)
    if (e.no_jobs) empty.push_back(&e);
  if (empty.empty() || empty.size() == r.workers.size()) return "";
  const std::vector<const Worker*> workers = AllWorkers(timeline);
  std::string out;
  for (size_t i = 0; i < empty.size() && i < kSilentLogsShown; ++i) {
    const Worker& worker = *workers[empty[i]->worker];
    out += "jobviz: warning: " + WorkerName(timeline, worker) + "'s log holds no job (" + worker.file + ": " +
           std::to_string(empty[i]->lines) + " lines" +
           (empty[i]->last_line.empty() ? "" : ", the last: " + empty[i]->last_line.substr(0, 80)) +
           "): a rank that never started its steps?\n";
  }
  if (empty.size() > kSilentLogsShown)
    out += "jobviz: warning: " + std::to_string(empty.size() - kSilentLogsShown) + " more logs hold no job\n";
  return out;
}

std::string StopReportLines(const StopReport& r, const Timeline& timeline) {
  if (!ShowsStop(r)) return NoJobLines(r, timeline);
  std::string out;
  for (const std::string& line : StopVerdictLines(r)) out += "jobviz: stopped: " + line + "\n";
  const std::vector<const Worker*> workers = AllWorkers(timeline);
  const std::vector<size_t> order = LaneOrder(r);
  size_t shown = 0;
  for (const size_t l : order) {
    if (shown == kStagesOnStderr) break;
    const LaneStop& lane = r.lanes[l];
    out += "jobviz: stopped:   replica " + std::to_string(lane.replica) + " stage " + std::to_string(lane.stage) + " (" +
           LaneWorkers(lane, workers, timeline) + "): last " +
           (lane.last.known() ? JobText(lane.last) + " of " + StepName(lane.last.step) + " at " +
                                    FormatSinceStart(lane.last.end - r.run_start)
                              : "none") +
           ", next " + JobText(lane.next) + ": " + StateText(lane) + "\n";
    ++shown;
  }
  if (order.size() > shown) {
    for (const std::string& line : FoldedStages(r, std::vector<size_t>(order.begin() + static_cast<std::ptrdiff_t>(shown), order.end())))
      out += "jobviz: stopped:   " + line + "\n";
    out += "jobviz: stopped:   (--summary-json's \"stopped\", the summary tables and --html list every stage)\n";
  }
  std::vector<const WorkerEnding*> silent;
  for (const WorkerEnding& e : r.workers)
    if (!e.no_jobs && (e.before_others >= kSilentAfter || e.cut_mid_line)) silent.push_back(&e);
  std::stable_sort(silent.begin(), silent.end(),
                   [](const WorkerEnding* a, const WorkerEnding* b) { return a->before_others > b->before_others; });
  for (size_t i = 0; i < silent.size() && i < kSilentLogsShown; ++i) {
    const WorkerEnding& e = *silent[i];
    const Worker& worker = *workers[e.worker];
    std::string line = "jobviz: stopped:   log of " + WorkerName(timeline, worker);
    if (e.before_others >= kSilentAfter) line += " ends " + FormatDuration(e.before_others) + " before the others'";
    if (e.cut_mid_line) line += std::string(e.before_others >= kSilentAfter ? ";" : "") + " ends inside a line";
    if (!e.last_line.empty()) line += " (" + worker.file + ":" + std::to_string(e.lines) + ": " + e.last_line.substr(0, 80) + ")";
    out += line + "\n";
  }
  if (silent.size() > kSilentLogsShown)
    out += "jobviz: stopped:   " + std::to_string(silent.size() - kSilentLogsShown) + " more logs end early\n";
  return out + NoJobLines(r, timeline);
}

std::string WithoutTerminalPrefixes(std::string text) {
  for (const std::string_view prefix : {"jobviz: stopped: ", "jobviz: "})
    for (size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at))
      if (at == 0 || text[at - 1] == '\n') text.erase(at, prefix.size());
      else at += prefix.size();
  return text;
}

}  // namespace jobviz
