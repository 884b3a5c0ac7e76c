// Runs into the ledger and back out: one transaction a run, read with the
// filters `jobviz history` and `jobviz hosts` take.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "history/ledger_db.h"
#include "history/run_record.h"

namespace jobviz {

struct StoredRun {
  std::int64_t id = 0;
  bool already = false;  // the same logs were recorded before: nothing written
};

// Writes `record` with its steps, workers, what-ifs and tags in one
// transaction; a run of the same identity is kept as it was. `replacing`:
// the identity of a run that this one replaces, removed in the same
// transaction (jobviz follow's run while live, then as it ended).
std::optional<StoredRun> StoreRun(LedgerDb& db, const RunRecord& record, LedgerError* error,
                                  const std::string& replacing = "");

// jobviz follow: one printed step added to the run of `identity` (or
// written again), with the run's step count, median step and bubble so far;
// the run is running (again).
bool AddStepRow(LedgerDb& db, const std::string& identity, std::int64_t step, double duration_us, double bubble,
                size_t steps, double step_us, double run_bubble, LedgerError* error);

struct RunFilter {
  std::map<std::string, std::string> tags;  // every one must match
  std::optional<std::int64_t> since;         // unix seconds: runs that started then or later
  std::string name;                          // "" = any
};

// A run as history lists it, with its tags and what-ifs (its workers and steps are not loaded).
struct LedgerRun {
  std::int64_t id = 0;
  RunRecord record;  // worker_rows and step_rows left empty
};

// Every run that `filter` lets through, oldest first (by start, then by
// when it was recorded).
std::optional<std::vector<LedgerRun>> LoadRuns(LedgerDb& db, const RunFilter& filter, LedgerError* error);

// A worker of a recorded run, with what the host ledger needs of its run.
struct LedgerWorker {
  std::int64_t run = 0;
  std::string run_name;
  RecordedWorker worker;
};
// Every worker row: tests and small ledgers (hosts reads LoadHostFacts).
std::optional<std::vector<LedgerWorker>> LoadWorkers(LedgerDb& db, const RunFilter& filter, LedgerError* error);

// What `jobviz hosts` ranks by (history/host_ledger.h), which a ledger of 20 M worker rows gives without
// reading them all: the workers that were slow or stopped first, the runs
// of each name, and how many runs a host (or one GPU of it) took part in.
struct HostFacts {
  std::vector<LedgerWorker> notable;
  std::map<std::string, size_t> runs_of_name;
  size_t runs = 0;
  std::function<size_t(const std::string& host, std::optional<int> gpu)> took_part;
};

// The facts of the runs `filter` lets through; took_part queries `db`, which must outlive it.
std::optional<HostFacts> LoadHostFacts(LedgerDb& db, const RunFilter& filter, LedgerError* error);

}  // namespace jobviz
