// `jobviz hosts`: hosts and GPUs across the recorded runs, ranked by the
// step time lost to them (docs/history.md). A slow worker is slower than
// its tensor-parallel peers or replicas in one run; across runs a host that
// is slow in different jobs and stages is the host's doing, while a stage
// slow on most hosts that ever ran it is the job's (a heavy stage), not theirs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "history/ledger_store.h"

namespace jobviz {

enum class SlowCause {
  kNone,  // never a slow worker
  kHost,  // slow in runs of different jobs or stages, or at a stage that is slow in few of its job's runs
  kJob,   // slow only at a job's stage that is slow in most of that job's runs
};
const char* SlowCauseKey(SlowCause cause);  // "", "host", "job"

struct HostLine {
  std::string host;
  std::optional<int> gpu;  // a GPU's line: its local index; a host's: none
  double lost_us = 0;      // summed over runs: the step time the no-slow-workers what-if gives back for it
  double worst_score = 0;  // the largest share of a run's step it cost
  size_t runs = 0, slow = 0, first_stop = 0;
  SlowCause cause = SlowCause::kNone;
  std::string where;  // the job and stage of a job's cause: "stage 3 of nightly-7b"
  std::vector<std::int64_t> slow_runs, stop_runs;  // run ids, ascending
};

struct HostLedger {
  std::vector<HostLine> hosts, gpus;  // those that lost time, were slow or stopped first; ranked: most lost first,
                                      // then first to stop, then slow
  size_t runs = 0;
};

// The facts of every worker row (tests, and small ledgers).
HostFacts FactsOfWorkers(const std::vector<LedgerWorker>& workers);

HostLedger RankHosts(const HostFacts& facts);

}  // namespace jobviz
