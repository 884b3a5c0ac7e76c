#include "analyse/stop_evaluation.h"

#include <cmath>

#include "analyse/stop_report.h"

namespace jobviz::sim {

namespace {

// The named lane's place, and whether its last and next job are the truth's.
bool PlaceRight(const StopReport& report, const Timeline& timeline, const TruePlace& place, std::string* why) {
  const LaneStop& lane = report.lanes[static_cast<size_t>(report.first)];
  const WorkerRole role = AllWorkers(timeline)[report.first_worker]->role;
  const int replica = role.known() ? role.replica : 0;
  const int stage = role.known() ? role.stage : lane.stage;
  if (place.replica != replica || place.stage != stage) return false;
  const bool last_right = place.last_type.empty() ? !lane.last.known()
                                                  : lane.last.type == place.last_type &&
                                                        lane.last.micro_batch == place.last_micro_batch &&
                                                        lane.last.step == place.last_step;
  const bool next_right = lane.next.type == place.next_type && lane.next.micro_batch == place.next_micro_batch &&
                          lane.next.step == place.next_step;
  if (last_right && next_right) return true;
  *why = "right stage, wrong jobs: " + report.sentence + " (truth: last " + place.last_type.str() + " " +
         std::to_string(place.last_micro_batch) + ", next " + place.next_type.str() + " " +
         std::to_string(place.next_micro_batch) + " of step " + std::to_string(place.next_step) + ")";
  return false;
}

bool NamesTruth(const StopReport& report, const Timeline& timeline, const StopTruth& truth, std::string* why) {
  if (report.first < 0) {
    *why = "named nobody: " + report.sentence;
    return false;
  }
  for (const TruePlace& place : truth.first)
    if (PlaceRight(report, timeline, place, why)) return true;
  if (why->empty())
    *why = "wrong stage: " + report.sentence + " (truth: stage " + std::to_string(truth.first.front().stage) +
           " replica " + std::to_string(truth.first.front().replica) + ")";
  return false;
}

}  // namespace

// A hang or death in the all-reduce of a run's first step, which left every
// pass and no closing job anywhere, and nothing the watchdog wrote: the
// logs are those of a one-step run that prints no optimizer line.
bool LooksFinished(const Timeline& timeline, const StopTruth& truth) {
  std::int64_t step = truth.hung_all_reduce != kNoHang ? truth.hung_step : kNoStep;
  for (const TruePlace& place : truth.first)
    if (place.in_all_reduce) step = place.next_step;
  if (step != 0) return false;
  for (const Worker* w : AllWorkers(timeline))
    if (!w->in_flight.empty()) return false;
  return true;
}

std::string JudgedAs(const StopTruth& truth) {
  if (truth.stopped) return truth.evidence ? "stop, timed" : "stop, not timed";
  if (truth.hung_all_reduce != kNoHang) return "all-reduce hang";
  return "no stop";
}

bool StopReportRight(const StopReport& report, const Timeline& timeline, const StopTruth& truth, std::string* why) {
  why->clear();
  if (truth.stopped && truth.evidence) {
    if (report.kind != jobviz::StopKind::kStopped) {
      *why = "not named, though the logs time it: " + report.sentence;
      return false;
    }
    return NamesTruth(report, timeline, truth, why);
  }
  if (truth.stopped) {  // nothing times it: the hedged suspect, or the all-reduce it died in
    if (report.kind == jobviz::StopKind::kFinished && LooksFinished(timeline, truth)) return true;
    if (report.kind == jobviz::StopKind::kAllReduce)
      for (const TruePlace& place : truth.first)
        if (place.in_all_reduce) return true;
    if (report.kind != jobviz::StopKind::kStopped && report.kind != jobviz::StopKind::kSuspect) {
      *why = "no suspect: " + report.sentence;
      return false;
    }
    return NamesTruth(report, timeline, truth, why);
  }
  if (truth.hung_all_reduce != kNoHang) {
    const int stage = truth.hung_all_reduce == kGlobalHang ? -1 : truth.hung_all_reduce;
    if (report.kind == jobviz::StopKind::kAllReduce && report.step == truth.hung_step && report.all_reduce_stage == stage)
      return true;
    if (report.kind == jobviz::StopKind::kFinished && LooksFinished(timeline, truth)) return true;
    *why = "not the all-reduce of step " + std::to_string(truth.hung_step) + " (stage " + std::to_string(stage) +
           "): " + report.sentence;
    return false;
  }
  if (report.kind == jobviz::StopKind::kStopped) {
    *why = "named someone without a hedge: " + report.sentence;
    return false;
  }
  return true;
}

StopRun RandomStopRun(std::uint64_t seed) {
  Random random{seed * 0xD1B54A32D192ED03ULL + 7};
  for (int i = 0; i < 4; ++i) random.Next();
  StopRun spec;
  spec.seed = seed;
  SimRun& run = spec.run;
  if (random.Next() < 0.3) {  // plain: one pipeline, every worker its own stage
    const int pp[] = {8, 16, 32, 64};
    run.pp = pp[random.Below(4)];
    run.mp = run.dp = 1;
    run.topology = false;
  } else {
    for (;;) {
      const int pp[] = {2, 4, 8}, mp[] = {1, 2, 4, 8}, dp[] = {1, 2, 4, 8, 16};
      run.pp = pp[random.Below(3)];
      run.mp = mp[random.Below(4)];
      run.dp = dp[random.Below(5)];
      const int workers = run.pp * run.mp * run.dp;
      if (workers >= 8 && workers <= 512) break;
    }
    // One stage to a machine (its tensor-parallel peers), clocks apart between stages.
    if (run.mp >= 2 && random.Next() < 0.3) run.per_machine = run.mp;
  }
  const int micro_batches[] = {4, 8, 16};
  run.micro_batches = micro_batches[random.Below(3)];
  run.steps = 1 + random.Below(4);
  // Jobs of 1 ms to 250 ms forward (log-uniform), backward twice that (up to 500 ms).
  run.forward = static_cast<Nanos>(1e6 * std::pow(250.0, random.Next()));
  run.backward = 2 * run.forward;
  run.optimizer = static_cast<Nanos>(static_cast<double>(run.forward) * (0.3 + 0.7 * random.Next()));
  run.latency = std::max<Nanos>(20 * kUs, run.forward / 100);
  run.jitter = 0.02 + 0.03 * random.Next();
  const double kind = random.Next();
  spec.stop = kind < 0.22   ? StopKind::kWorker
              : kind < 0.36 ? StopKind::kStage
              : kind < 0.50 ? StopKind::kMachine
              : kind < 0.62 ? StopKind::kAllReduce
              : kind < 0.70 ? StopKind::kBetweenSteps
              : kind < 0.88 ? StopKind::kCut
                            : StopKind::kFinished;
  spec.barrier = random.Next() < 0.5;
  spec.in_flight = random.Next() < 0.5;
  spec.kill_lines = random.Next() < 0.3;
  // A hang in an all-reduce the run has: the global one, or its stage's
  // replicas' (a run of one replica and no global one has none).
  if (spec.stop == StopKind::kAllReduce && run.dp < 2) spec.barrier = true;
  spec.global_hang = spec.barrier;
  return spec;
}

}  // namespace jobviz::sim
