// The run history (docs/history.md): --record appends a finished run to the
// ledger; `jobviz history` and `jobviz hosts` read it back.
#include <cstdio>
#include <ctime>

#include "cli/exit_status.h"
#include "cli/report.h"
#include "commands/commands.h"
#include "history/history_text.h"
#include "history/ledger_store.h"

namespace jobviz {

namespace {

int LedgerFailure(const char* what, const LedgerError& error) {
  PrintError(std::string(what) + ": " + error.message, error.hint);
  return kExitLedger;
}

}  // namespace

int RecordRun(const RecordPlan& plan, const FinishedRun& run, const char* command, int verbosity) {
  LedgerError error;
  std::optional<LedgerDb> db = LedgerDb::Open(plan.ledger, /*for_writing=*/true, &error);
  if (!db) return LedgerFailure("--record", error);
  const RunRecord record = RecordOf(run, plan.name, plan.tags, command, static_cast<std::int64_t>(std::time(nullptr)));
  const std::optional<StoredRun> stored = StoreRun(*db, record, &error);
  if (!stored) return LedgerFailure("--record", error);
  if (verbosity >= kNormal)
    PrintReport(stored->already ? "jobviz: record: these logs are run #" + std::to_string(stored->id) + " in " + plan.ledger +
                                      " already (recorded before; nothing added)\n"
                                : "jobviz: record: run #" + std::to_string(stored->id) + " '" + record.name + "' added to " +
                                      plan.ledger + " (" + std::to_string(record.workers) + " workers, " +
                                      std::to_string(record.steps) + " steps)\n");
  return kExitOk;
}

int RunHistory(const HistoryPlan& plan) {
  const char* command = plan.hosts ? "jobviz hosts" : "jobviz history";
  LedgerError error;
  std::optional<LedgerDb> db = LedgerDb::Open(plan.ledger, /*for_writing=*/false, &error);
  if (!db) return LedgerFailure(command, error);
  std::string out;
  if (plan.hosts) {
    const auto workers = LoadWorkers(*db, plan.filter, &error);
    if (!workers) return LedgerFailure(command, error);
    const HostLedger ledger = RankHosts(*workers);
    out = plan.json ? HostsJsonLines(ledger) : HostsTable(ledger, plan.top);
  } else {
    const auto runs = LoadRuns(*db, plan.filter, &error);
    if (!runs) return LedgerFailure(command, error);
    const std::vector<HistoryLine> lines = CompareRuns(*runs, plan.options);
    out = plan.json ? HistoryJsonLines(lines) : HistoryTable(lines, plan.options);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? kExitOk : kExitBadInput;
}

}  // namespace jobviz
