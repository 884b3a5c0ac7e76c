// Which job hands over to which: a micro-batch's forward on stage s feeds
// its forward on stage s+1, its backward on stage s+1 feeds its backward on
// stage s, within one pipeline: the workers of one replica and one
// tensor-parallel index, in stage order (Timeline::topology and the workers'
// roles). Without a topology the whole run is one pipeline in
// Timeline::stage_order, by default global rank order (machine, then worker).
// Used by clock alignment (order violations), the schedule and the trace's
// flow arrows.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "model/model.h"

namespace jobviz {

enum class Direction { kForward, kBackward, kOther };

// forward* flows to the next stage; backward* (not zero-bubble backward_w*,
// which waits for nobody) to the previous one.
Direction DirectionOf(const std::string& type);

// DirectionOf for a run's jobs, each type worked out once.
using DirectionsByType = PerName<Direction, DirectionOf>;

struct HandOff {
  const Job* sender;
  const Job* receiver;
  int sender_machine, receiver_machine;
  const Worker* sender_worker;
  const Worker* receiver_worker;
  int stage;  // the pair is stages (stage, stage + 1) in pipeline order
  bool forward;  // the sender is on `stage`, else on stage + 1 (a backward hand-off)
};

// The workers, with their machine's index, in pipeline stage order:
// Timeline::stage_order, or global rank order (machine, then worker).
std::vector<std::pair<int, const Worker*>> WorkersInStageOrder(const Timeline& timeline);

// One pipeline: a replica's stages for one tensor-parallel index, in stage
// order. Stages whose logs were not read are missing: stage numbers[k] is at
// stages[k], and two entries hand over only when their numbers are adjacent.
struct PipelineChain {
  int replica = 0, peer = 0;
  std::vector<std::pair<int, const Worker*>> stages;  // (machine index, worker)
  std::vector<int> numbers;                           // each entry's stage
};
// Every pipeline, by replica then peer; one chain in stage order when no
// topology is known (Timeline::topology.hybrid() false).
std::vector<PipelineChain> PipelineChains(const Timeline& timeline);

// Jobs pair by type, micro-batch and how many of that pair came before on
// the worker (so the same micro-batch of different steps pairs up right).
// Stage pairs are visited in pipeline order, or from the last pair down;
// within a pair by the start of the lower stage's job, either way.
struct HandOffWalk {
  bool forward = true, backward = true;  // which hand-offs to visit
  bool last_stage_first = false;
  bool across_machines_only = false;  // skip stage pairs on one machine (clock checks)
};
void ForEachHandOff(const Timeline& timeline, const std::function<void(const HandOff&)>& visit,
                    const HandOffWalk& walk = {});
// One pipeline's: chains are apart from each other, so each may be walked
// on a thread of its own.
void ForEachHandOffInChain(const PipelineChain& chain, const std::function<void(const HandOff&)>& visit,
                           const HandOffWalk& walk = {});

// The hand-offs between two neighbouring stages of a pipeline at once: for
// each job of the lower stage (by its index in the worker's jobs), the job
// of the upper stage it pairs with. What ForEachHandOffInChain visits one
// at a time (it is built on this), for a consumer that marks the jobs of
// both workers: one call a stage pair, not one a hand-off (the traces' flow
// chains: 1.2 M calls through a std::function on the dense scale logs).
struct StagePairing {
  struct Partner {
    const Job* job = nullptr;  // on the upper stage; null: none
    bool forward = false;      // the lower stage's job sends to it, else receives from it
  };
  int stage = 0;  // the lower stage's number; the upper's is stage + 1
  int lower_machine = 0, upper_machine = 0;
  const Worker* lower = nullptr;
  const Worker* upper = nullptr;
  std::span<const Partner> partners;  // by the lower stage's job index
};
void ForEachStagePairing(const PipelineChain& chain, const std::function<void(const StagePairing&)>& visit,
                         const HandOffWalk& walk = {});

// One MACHINE:WORKER of --stage_order, as named on the command line.
struct StageRef {
  std::string machine;
  int worker = 0;
  std::string text;  // as given, for messages
};

// Turns named stages into (machine index, worker index N) against the
// timeline's machines and workers; every worker must appear exactly once.
bool ResolveStageOrder(const std::vector<StageRef>& stages, const Timeline& timeline,
                       std::vector<std::pair<int, int>>* order, std::string* error);

}  // namespace jobviz
