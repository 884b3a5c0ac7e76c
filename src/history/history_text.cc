#include "history/history_text.h"

#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "emit/summary_tables.h"

namespace jobviz {

namespace {

using nlohmann::json;

std::string Signed(double value, int digits, const char* unit) {
  return (value >= 0 ? "+" : "") + FixedText(value, digits) + unit;
}

std::string Tags(const std::map<std::string, std::string>& tags) {
  std::string out;
  for (const auto& [key, value] : tags) out += (out.empty() ? "" : ",") + key + "=" + value;
  return out;
}

std::string StepCell(const HistoryLine& line) {
  const RunRecord& r = line.run->record;
  if (r.steps == 0) return "-";
  std::string cell = FixedText(r.step_us / 1000, 1) + " ms";
  if (line.step_change) cell += " (" + Signed(*line.step_change * 100, 1, "%") + ")";
  return cell + (line.step_regressed ? " !" : "");
}

std::string BubbleCell(const HistoryLine& line) {
  const RunRecord& r = line.run->record;
  if (r.steps == 0) return "-";
  std::string cell = Percent(r.bubble);
  if (line.bubble_change) cell += " (" + Signed(*line.bubble_change * 100, 1, " pt") + ")";
  return cell + (line.bubble_regressed ? " !" : "");
}

std::string StopCell(const RunRecord& r) {
  if (r.finished()) return "no";
  std::string cell = r.stop_kind;
  if (r.stop_step) cell += " at step " + std::to_string(*r.stop_step);
  if (!r.stop_host.empty()) cell += ", " + r.stop_host + (r.stop_gpu ? " gpu " + std::to_string(*r.stop_gpu) : "");
  return cell;
}

std::string Ids(const std::vector<std::int64_t>& ids) {
  constexpr size_t kShown = 8;
  std::string out;
  for (size_t i = 0; i < ids.size() && i < kShown; ++i) out += (i ? "," : "#") + std::to_string(ids[i]);
  if (ids.size() > kShown) out += ",... (" + std::to_string(ids.size()) + ")";
  return out.empty() ? "-" : out;
}

std::string HostName(const HostLine& line) {
  return line.host + (line.gpu ? " gpu " + std::to_string(*line.gpu) : "");
}

std::string CauseCell(const HostLine& line) {
  const std::string cause = SlowCauseText(line);
  return cause.empty() ? "-" : cause;
}

void AppendHostRows(std::vector<std::vector<std::string>>& rows, const std::vector<HostLine>& lines, size_t top) {
  // Ranked: those that lost time, stopped first or were slow come first.
  for (const HostLine& line : lines) {
    if (rows.size() > top || (line.lost_us <= 0 && line.first_stop == 0 && line.slow == 0)) break;
    rows.push_back({HostName(line), FixedText(line.lost_us / 1000, 2) + " ms", std::to_string(line.slow),
                    std::to_string(line.first_stop), std::to_string(line.runs), CauseCell(line),
                    Ids(line.slow_runs), Ids(line.stop_runs)});
  }
}

json HostJson(const HostLine& line, const char* kind) {
  json j = {{"kind", kind}, {"host", line.host}, {"lost_us", line.lost_us}, {"worst_score", line.worst_score},
            {"runs", line.runs}, {"slow", line.slow}, {"first_to_stop", line.first_stop},
            {"cause", line.cause == SlowCause::kNone ? json(nullptr) : json(SlowCauseKey(line.cause))},
            {"slow_runs", line.slow_runs}, {"stop_runs", line.stop_runs}};
  if (line.gpu) j["gpu"] = *line.gpu;
  if (!line.where.empty()) j["where"] = line.where;
  return j;
}

}  // namespace

std::string SlowCauseText(const HostLine& line) {
  if (line.cause == SlowCause::kJob) return "the job's (" + line.where + ")";
  if (line.cause == SlowCause::kHost) return "the host's";
  return "";
}

std::string FixedText(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

std::string LedgerTime(std::int64_t seconds) {
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M", &utc);
  return text;
}

std::string HistoryTable(const std::vector<HistoryLine>& lines, const HistoryOptions& options) {
  if (lines.empty()) return "no run recorded (or none that the filters let through)\n";
  std::vector<std::vector<std::string>> rows = {
      {"run", "when (UTC)", "name", "tags", "steps", "step time", "bubble", "top cause", "stopped"}};
  size_t regressions = 0;
  for (const HistoryLine& line : lines) {
    const RunRecord& r = line.run->record;
    rows.push_back({"#" + std::to_string(line.run->id), LedgerTime(r.when()), r.name,
                    Tags(r.tags), std::to_string(r.steps), StepCell(line), BubbleCell(line),
                    r.top_what_if.empty() ? "-" : r.top_what_if, StopCell(r)});
    regressions += line.step_regressed || line.bubble_regressed;
  }
  std::string out = TextTable(rows);
  out += "  changes against the median of up to " + std::to_string(options.compare) +
         " finished runs of its name before each; ! marks a regression (step time over +" + FixedText(options.step_regression * 100, 0) +
         "%, bubble over +" + FixedText(options.bubble_regression * 100, 0) + " pt)";
  out += regressions ? ": " + std::to_string(regressions) + (regressions == 1 ? " run regressed\n" : " runs regressed\n") : "\n";
  return out;
}

std::string HistoryJsonLines(const std::vector<HistoryLine>& lines) {
  std::string out;
  for (const HistoryLine& line : lines) {
    const RunRecord& r = line.run->record;
    const auto optional = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
    json j = {{"run", line.run->id}, {"identity", r.identity}, {"name", r.name}, {"tags", r.tags},
              {"started_at", r.started_at}, {"recorded_at", r.recorded_at}, {"command", r.command},
              {"topology", {{"pp", r.pp}, {"mp", r.mp}, {"dp", r.dp}}}, {"stages", r.stages},
              {"micro_batches", r.micro_batches}, {"machines", r.machines}, {"workers", r.workers}, {"jobs", r.jobs},
              {"schedule", r.schedule}, {"steps", r.steps}, {"step_us", r.step_us}, {"bubble_ratio", r.bubble},
              {"ideal_bubble_ratio", optional(r.ideal_bubble)},
              {"top_cause", {{"what_if", r.top_what_if}, {"gain", r.top_gain}, {"text", r.top_cause}}},
              {"stopped", {{"kind", r.stop_kind}, {"sentence", r.stop_sentence},
                           {"step", r.stop_step ? json(*r.stop_step) : json(nullptr)},
                           {"host", r.stop_host.empty() ? json(nullptr) : json(r.stop_host)},
                           {"gpu", r.stop_gpu ? json(*r.stop_gpu) : json(nullptr)}}},
              {"compared_with", line.before},
              {"median_step_us", optional(line.median_step_us)}, {"median_bubble_ratio", optional(line.median_bubble)},
              {"step_change", optional(line.step_change)}, {"bubble_change", optional(line.bubble_change)},
              {"regressed", {{"step", line.step_regressed}, {"bubble", line.bubble_regressed}}}};
    out += j.dump() + "\n";
  }
  return out;
}

std::string HostsTable(const HostLedger& ledger, size_t top) {
  if (ledger.runs == 0) return "no run recorded (or none that the filters let through)\n";
  const std::vector<std::string> header = {"", "step time lost", "slow", "first to stop", "runs", "cause",
                                           "slow in", "stopped first in"};
  std::vector<std::vector<std::string>> hosts = {header}, gpus = {header};
  hosts[0][0] = "host";
  gpus[0][0] = "GPU";
  AppendHostRows(hosts, ledger.hosts, top);
  AppendHostRows(gpus, ledger.gpus, top);
  const auto count = [](size_t n, const char* one, const char* many) { return std::to_string(n) + (n == 1 ? one : many); };
  std::string out = count(ledger.runs, " run: ", " runs: ") + count(ledger.hosts.size(), " host and ", " hosts and ") +
                    count(ledger.gpus.size(), " GPU were", " GPUs were") + " slow or stopped first\n";
  if (hosts.size() == 1) return out + "no host was a slow worker or the first to stop in any of them\n";
  out += TextTable(hosts) + "\n" + TextTable(gpus);
  out += "  step time lost: per step, summed over runs (each run's no-slow-workers what-if, shared among its slow\n"
         "  workers by how much slower each was); the job's: slow only at a job's stage slow in most of its runs\n";
  return out;
}

std::string HostsJsonLines(const HostLedger& ledger) {
  std::string out;
  for (const HostLine& line : ledger.hosts) out += HostJson(line, "host").dump() + "\n";
  for (const HostLine& line : ledger.gpus) out += HostJson(line, "gpu").dump() + "\n";
  return out;
}

}  // namespace jobviz
