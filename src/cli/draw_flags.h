// The flags `jobviz`, `jobviz merge` and `jobviz follow` share, as typed,
// and how they become a DrawPlan (cli/options.cc); only the command-line
// parsers in cli/ include this.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "cli/options.h"

namespace jobviz {

// The command line as typed, before it becomes a plan.
struct DrawFlags {
  InputPlan inputs;
  std::string run = "last", steps, output, chrome_output, align = "auto", offsets, clock_ref, stage_order, summary_json;
  std::string topology, rank_order;
  std::string summary_md, junit, baseline, html, json_args = "compact", summary_workers = "auto", rows = "machine", what_if;
  size_t html_max_jobs = kDefaultHtmlMaxJobs;
  std::vector<std::string> fail_on;
  bool no_critical_path = false;
  bool hung = false;  // --hung
  bool allow_stopped = false;  // --allow-stopped: a --baseline gate passes a run that stopped
  bool no_chrome = false, summary_on = false, summary_off = false, quiet = false, verbose = false;
  std::string record, run_name, baseline_history;  // --record, --run-name, --baseline-history
  std::vector<std::string> tags;  // --tag KEY=VALUE
  std::vector<std::string> baseline_match;  // --baseline-match KEY
};

void AddInputOptions(CLI::App& app, DrawFlags& f);
void AddOutputOptions(CLI::App& app, DrawFlags& f);
void AddClockOptions(CLI::App& app, DrawFlags& f);
// --record, --run-name, --tag (cli/history_options.cc), and the plan they make.
void AddRecordOptions(CLI::App& app, DrawFlags& f, bool baseline);  // baseline: --baseline-history too
std::optional<RecordPlan> PlanRecord(const DrawFlags& f, bool merge, std::string* error);
// --run-name, or the log directory's name (merge: the events files' directory's).
std::string RunName(const DrawFlags& f, bool merge);
// --baseline-history: the baseline made from the ledger now, so that a bad
// ledger or an unknown name fails before the logs are read; an exit code.
int LoadHistoryBaseline(const DrawFlags& f, bool merge, std::optional<nlohmann::json>* baseline);
// Every KEY=VALUE of --tag into `tags`, or an error that names the first that is not.
bool ParseTags(const std::vector<std::string>& texts, std::map<std::string, std::string>* tags, std::string* error);

// Which command the flags are for: merge and follow write only the outputs named.
enum class DrawCommand { kDraw, kMerge, kFollow };
Parsed<DrawPlan> ToPlan(DrawFlags& f, DrawCommand command);

// "jobviz: error: MESSAGE" and a hint on stderr; returns kExitUsage.
int UsageError(const char* command, const std::string& message, const std::string& hint);

// Parses argv into `app`'s options; a plan-less result when the command
// should stop here (help, version: exit 0; a parse error: exit 2).
template <typename Plan>
std::optional<Parsed<Plan>> ParseOrExit(CLI::App& app, int argc, char** argv, const char* command) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return Parsed<Plan>{std::nullopt, app.exit(e)};
  } catch (const CLI::CallForAllHelp& e) {
    return Parsed<Plan>{std::nullopt, app.exit(e)};
  } catch (const CLI::CallForVersion& e) {
    return Parsed<Plan>{std::nullopt, app.exit(e)};
  } catch (const CLI::ParseError& e) {
    const std::string hint = std::string("run '") + command + " --help'" +
                             (std::string(command) == "jobviz" ? " for the options" : "");
    return Parsed<Plan>{std::nullopt, UsageError(command, e.what(), hint)};
  }
  return std::nullopt;
}


}  // namespace jobviz
