// The run history (docs/history.md): --record appends a finished run to the
// ledger; `jobviz history` and `jobviz hosts` read it back.
#include <cstdio>
#include <ctime>

#include "cli/exit_status.h"
#include "cli/report.h"
#include "commands/commands.h"
#include "history/history_html.h"
#include "history/history_text.h"
#include "history/run_file.h"
#include "write/atomic_file.h"
#include "history/ledger_store.h"

namespace jobviz {

namespace {

int LedgerFailure(const char* what, const LedgerError& error) {
  PrintError(std::string(what) + ": " + error.message, error.hint);
  return kExitLedger;
}

bool WriteHtml(const char* command, const std::string& path, const std::string& page) {
  AtomicFile file;
  if (file.Open(path)) {
    file.Write(page);
    if (file.Commit()) {
      PrintReport(std::string(command) + ": wrote " + path + "\n");
      return true;
    }
  }
  PrintError(std::string(command) + " --html: " + file.error(), "check that the directory is writable");
  return false;
}

// --record DIR: one file a run, for file systems where SQLite's locks do not hold.
int RecordRunFile(const RecordPlan& plan, const RunRecord& record, int verbosity) {
  std::string error;
  const auto written = WriteRunFile(plan.ledger, record, &error);
  if (!written) {
    PrintError("--record " + plan.ledger + ": " + error, "check that the directory exists and is writable");
    return kExitLedger;
  }
  if (verbosity >= kNormal)
    PrintReport(written->already ? "jobviz: record: these logs are " + written->path + " already (nothing written)\n"
                                 : "jobviz: record: run '" + record.name + "' written to " + written->path + "\n");
  return kExitOk;
}

// A directory of run files read as a ledger: stored into one in memory.
std::optional<LedgerDb> OpenRunDirectory(const std::string& dir, LedgerError* error) {
  std::optional<LedgerDb> db = LedgerDb::Open(":memory:", /*for_writing=*/true, error);
  size_t added = 0, files = 0;
  if (!db || !ImportRunFiles(dir, *db, &added, &files, error)) return std::nullopt;
  return db;
}

}  // namespace

int RecordRun(const RecordPlan& plan, const FinishedRun& run, const char* command, int verbosity) {
  if (IsRunDirectory(plan.ledger))
    return RecordRunFile(plan, RecordOf(run, plan.name, plan.tags, command, static_cast<std::int64_t>(std::time(nullptr))), verbosity);
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
  if (!plan.import.empty()) {  // jobviz history --import DIR LEDGER
    std::optional<LedgerDb> db = LedgerDb::Open(plan.ledger, /*for_writing=*/true, &error);
    size_t added = 0, files = 0;
    if (!db || !ImportRunFiles(plan.import, *db, &added, &files, &error)) return LedgerFailure("jobviz history --import", error);
    PrintReport("jobviz history: imported " + std::to_string(added) + " of " + std::to_string(files) + " runs from " +
                plan.import + " into " + plan.ledger + (added < files ? " (the others were there already)\n" : "\n"));
    return kExitOk;
  }
  std::optional<LedgerDb> db = IsRunDirectory(plan.ledger) ? OpenRunDirectory(plan.ledger, &error)
                                                           : LedgerDb::Open(plan.ledger, /*for_writing=*/false, &error);
  if (!db) return LedgerFailure(command, error);
  std::string out;
  if (plan.hosts) {
    const auto facts = LoadHostFacts(*db, plan.filter, &error);
    if (!facts) return LedgerFailure(command, error);
    const HostLedger ledger = RankHosts(*facts);
    out = plan.json ? HostsJsonLines(ledger) : HostsTable(ledger, plan.top);
    if (!plan.html.empty() && !WriteHtml(command, plan.html, HostsHtml(ledger, plan.top, plan.ledger))) return kExitBadInput;
  } else {
    const auto runs = LoadRuns(*db, plan.filter, &error);
    if (!runs) return LedgerFailure(command, error);
    const std::vector<HistoryLine> lines = CompareRuns(*runs, plan.options);
    out = plan.json ? HistoryJsonLines(lines) : HistoryTable(lines, plan.options);
    if (!plan.html.empty() && !WriteHtml(command, plan.html, HistoryHtml(lines, plan.options, plan.series, plan.ledger)))
      return kExitBadInput;
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? kExitOk : kExitBadInput;
}

}  // namespace jobviz
