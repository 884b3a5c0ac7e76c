// The run history's options: --record, --run-name and --tag on `jobviz`
// and `jobviz merge`, and the command lines of `jobviz history` and
// `jobviz hosts` (docs/history.md).
#include <ctime>
#include <filesystem>

#include "cli/draw_flags.h"
#include "cli/exit_status.h"
#include "cli/options.h"
#include "cli/report.h"
#include "history/history_baseline.h"

namespace jobviz {

namespace {

const char* kTagHint = "e.g. --tag commit=3f2a1c9 --tag cluster=a100-east (KEY=VALUE, repeatable)";

// --since: YYYY-MM-DD (UTC midnight) or Nd (N days before now), as unix seconds.
std::optional<std::int64_t> ParseSince(const std::string& text, std::int64_t now) {
  if (!text.empty() && text.back() == 'd') {
    const std::string days = text.substr(0, text.size() - 1);
    if (days.empty() || days.size() > 5 || days.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    return now - std::stoll(days) * 86'400;
  }
  std::tm date{};
  if (text.size() != 10 || !strptime(text.c_str(), "%Y-%m-%d", &date)) return std::nullopt;
  return static_cast<std::int64_t>(timegm(&date));
}

void AddFilterOptions(CLI::App& app, std::string& name, std::vector<std::string>& tags, std::string& since) {
  app.add_option("--name", name, "Only runs of this --run-name")->type_name("NAME");
  app.add_option("--tag", tags, "Only runs with this tag (repeatable: all must match)")->type_name("KEY=VALUE");
  app.add_option("--since", since, "Only runs that started on or after this day (UTC), or in the last N days")
      ->type_name("YYYY-MM-DD|Nd");
}

}  // namespace

std::string RunName(const DrawFlags& f, bool merge) {
  if (!f.run_name.empty()) return f.run_name;
  // The log directory's name; given files (merge's events): their directory's.
  std::filesystem::path source = std::filesystem::absolute(f.inputs.log_dir.empty() || merge
                                                               ? std::filesystem::path(f.inputs.files.at(0)).parent_path()
                                                               : std::filesystem::path(f.inputs.log_dir));
  source = source.lexically_normal();
  if (!source.has_filename()) source = source.parent_path();  // "logs/" -> "logs"
  return source.filename().string();
}

int LoadHistoryBaseline(const DrawFlags& f, bool merge, std::optional<nlohmann::json>* baseline) {
  const char* hint = "e.g. --baseline-history runs.db:10 (the median of the last 10 runs of this --run-name)";
  const auto source = ParseHistoryBaseline(f.baseline_history);
  if (!source) {
    PrintError("--baseline-history " + f.baseline_history + ": K must be a number from 1", hint);
    return kExitUsage;
  }
  LedgerError error;
  std::optional<LedgerDb> db = LedgerDb::Open(source->ledger, /*for_writing=*/false, &error);
  const std::string name = RunName(f, merge);
  RunFilter filter;
  filter.name = name;
  std::map<std::string, std::string> tags;
  std::string tag_error;
  if (!ParseTags(f.tags, &tags, &tag_error)) {
    PrintError(tag_error, kTagHint);
    return kExitUsage;
  }
  for (const std::string& key : f.baseline_match) {  // this run's value of each key
    const auto tag = tags.find(key);
    if (tag == tags.end()) {
      PrintError("--baseline-match " + key + ": this run has no --tag " + key + "=VALUE to match", hint);
      return kExitUsage;
    }
    filter.tags[key] = tag->second;
  }
  const auto runs = db ? LoadRuns(*db, filter, &error) : std::nullopt;
  if (!runs) {
    PrintError("--baseline-history: " + error.message, error.hint);
    return kExitLedger;
  }
  std::string described;
  *baseline = BaselineOfRuns(*runs, source->runs, &described);
  if (!*baseline) {
    PrintError("--baseline-history " + source->ledger + ": no finished run named '" + name + "'" +
                   (filter.tags.empty() ? "" : " with those --baseline-match tags") + " recorded",
               "record a run of it first (--record " + source->ledger + " --run-name " + name + "), or name another with --run-name");
    return kExitUsage;
  }
  PrintReport("jobviz: baseline: " + described + " in " + source->ledger + "\n");
  return kExitOk;
}

bool ParseTags(const std::vector<std::string>& texts, std::map<std::string, std::string>* tags, std::string* error) {
  for (const std::string& text : texts) {
    const size_t equals = text.find('=');
    if (equals == std::string::npos || equals == 0) {
      *error = "--tag '" + text + "': expected KEY=VALUE";
      return false;
    }
    (*tags)[text.substr(0, equals)] = text.substr(equals + 1);
  }
  return true;
}

void AddRecordOptions(CLI::App& app, DrawFlags& f, bool baseline) {
  app.add_option("--record", f.record,
                 "Append this run to the run history in LEDGER (an SQLite file, created on first use; the same logs "
                 "twice are one run), or as one file in LEDGER/ when it is a directory (NFS, Lustre): jobviz history / "
                 "jobviz hosts read it (docs/history.md)")
      ->type_name("LEDGER");
  app.add_option("--run-name", f.run_name, "With --record: the run's name (default: the log directory's name)")
      ->type_name("NAME");
  app.add_option("--tag", f.tags, "With --record: KEY=VALUE to keep with the run, e.g. commit=3f2a1c9 (repeatable)")
      ->type_name("KEY=VALUE");
  if (!baseline) return;
  app.add_option("--baseline-history", f.baseline_history,
                 "As --baseline, the median of the last K finished runs of this --run-name in LEDGER (default K 10): "
                 "--fail-on 'bubble_ratio > baseline + 0.02' (docs/history.md)")
      ->type_name("LEDGER[:K]");
  app.add_option("--baseline-match", f.baseline_match,
                 "With --baseline-history: only runs whose tag KEY has this run's value (its --tag KEY=VALUE), "
                 "e.g. --tag config=7b-mb16 --baseline-match config (repeatable)")
      ->type_name("KEY");
}

std::optional<RecordPlan> PlanRecord(const DrawFlags& f, bool merge, std::string* error) {
  if (f.record.empty()) {  // --run-name also names the runs --baseline-history compares with
    std::map<std::string, std::string> checked;
    if ((!f.tags.empty() || !f.run_name.empty()) && f.baseline_history.empty())
      *error = "--run-name and --tag say what to record: give --record LEDGER (or --baseline-history)";
    else
      ParseTags(f.tags, &checked, error);
    return std::nullopt;
  }
  RecordPlan plan;
  plan.ledger = f.record;
  if (!ParseTags(f.tags, &plan.tags, error)) return std::nullopt;
  plan.name = RunName(f, merge);
  return plan;
}

Parsed<HistoryPlan> ParseHistoryCommandLine(int argc, char** argv, bool hosts) {
  const char* command = hosts ? "jobviz hosts" : "jobviz history";
  CLI::App app{hosts ? "jobviz hosts: hosts and GPUs across the recorded runs, ranked by the step time lost to them,\n"
                       "with how often each was a slow worker or the first to stop (docs/history.md)."
                     : "jobviz history: the recorded runs, each beside the median of the runs before it, regressions\n"
                       "marked (docs/history.md)."};
  HistoryPlan plan;
  plan.hosts = hosts;
  std::string since;
  std::vector<std::string> tags;
  app.add_option("ledger", plan.ledger, "The run history: the SQLite file (or the directory of run files) that --record wrote")
      ->required()->type_name("LEDGER");
  AddFilterOptions(app, plan.filter.name, tags, since);
  if (hosts) {
    app.add_option("--top", plan.top, "Lines of each table (default 20)")->check(CLI::Range(size_t{1}, size_t{1'000'000}));
  } else {
    app.add_option("--last", plan.options.last, "Runs shown, the latest (default 20)")->check(CLI::Range(size_t{1}, size_t{1'000'000}));
    app.add_option("--compare", plan.options.compare, "Runs before each that its median is taken over (default 10)")
        ->check(CLI::Range(size_t{1}, size_t{10'000}));
  }
  app.add_flag("--json", plan.json, "JSON lines, one object per run (or host), instead of a table");
  app.add_option("--html", plan.html, hosts ? "Also write the tables as a self-contained HTML page to FILE"
                                            : "Also write a self-contained HTML page to FILE: step time and bubble over "
                                              "the runs as charts, each point opening its run's line")
      ->type_name("FILE");
  if (!hosts)
    app.add_option("--import", plan.import,
                   "Add the run files that --record DIR wrote to LEDGER (created on first use), and stop")
        ->type_name("DIR");
  if (!hosts)
    app.add_option("--series", plan.series,
                   "With --html: one series a value of this tag key (or name) (default: the first tag that changes)")
        ->type_name("KEY");
  if (auto stop = ParseOrExit<HistoryPlan>(app, argc, argv, command)) return std::move(*stop);
  if (std::string error; !ParseTags(tags, &plan.filter.tags, &error)) return {std::nullopt, UsageError(command, error, kTagHint)};
  if (!since.empty()) {
    plan.filter.since = ParseSince(since, static_cast<std::int64_t>(std::time(nullptr)));
    if (!plan.filter.since)
      return {std::nullopt, UsageError(command, "--since '" + since + "': expected YYYY-MM-DD or Nd", "e.g. --since 2026-11-01 or --since 30d")};
  }
  return {std::move(plan), kExitOk};
}

}  // namespace jobviz
