#include "emit/diff_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "emit/summary_tables.h"
#include "model/time_value.h"

namespace jobviz {

namespace {

constexpr size_t kWorkerRowsShown = 8;

// A value in its unit: "29.5%", "31.09 ms", "272".
std::string Value(const MetricChange& row, const std::optional<double>& value) {
  if (!value) return "-";
  char text[48];
  switch (row.unit) {
    case MetricUnit::kRatio:
      std::snprintf(text, sizeof text, "%.1f%%", *value * 100);
      return text;
    case MetricUnit::kMicros:
      return FormatDuration(static_cast<Nanos>(std::llround(*value * 1000)));
    case MetricUnit::kCount:
      break;
  }
  std::snprintf(text, sizeof text, "%.6g", *value);
  return text;
}

// "+14.5 pp" for ratios (percentage points), "-10.94 ms (-35.2%)", "+1 (+25.0%)".
std::string Change(const MetricChange& row) {
  const auto change = row.change();
  if (!change) return "-";
  char text[64];
  if (row.unit == MetricUnit::kRatio) {
    std::snprintf(text, sizeof text, "%+.1f pp", *change * 100);
    return text;
  }
  std::string out;
  if (row.unit == MetricUnit::kMicros) {
    out = (*change > 0 ? "+" : "") + FormatDuration(static_cast<Nanos>(std::llround(*change * 1000)));
  } else {
    std::snprintf(text, sizeof text, "%+.6g", *change);
    out = text;
  }
  if (const auto relative = row.relative()) {
    std::snprintf(text, sizeof text, " (%+.1f%%)", *relative * 100);
    out += text;
  }
  return out;
}

const char* VerdictText(Verdict verdict) {
  switch (verdict) {
    case Verdict::kWorse: return "worse";
    case Verdict::kBetter: return "better";
    case Verdict::kSame: return "same";
    case Verdict::kNone: break;
  }
  return "";
}

const char* UnitName(MetricUnit unit) {
  switch (unit) {
    case MetricUnit::kRatio: return "ratio";
    case MetricUnit::kMicros: return "us";
    case MetricUnit::kCount: break;
  }
  return "count";
}

nlohmann::json JsonValue(const std::optional<double>& value) { return value ? nlohmann::json(*value) : nlohmann::json(); }

// The worker rows not shown, one line per stage where the summaries give
// stages ("... stage 2: 14 more workers' bubble_ratio, -0.4 to +9.8 pp"),
// else one line for all, in stage order.
std::vector<std::string> FoldedLines(const std::vector<MetricChange>& rows, const std::vector<const MetricChange*>& shown) {
  struct Fold {
    size_t count = 0;
    double low = 0, high = 0;
    bool ranged = false;
  };
  std::map<std::optional<std::int64_t>, Fold> folds;  // by stage; no stage first
  for (const MetricChange& row : rows) {
    if (row.metric.rfind("workers[", 0) != 0 || std::find(shown.begin(), shown.end(), &row) != shown.end()) continue;
    Fold& fold = folds[row.stage];
    ++fold.count;
    if (const auto change = row.change()) {
      fold.low = fold.ranged ? std::min(fold.low, *change) : *change;
      fold.high = fold.ranged ? std::max(fold.high, *change) : *change;
      fold.ranged = true;
    }
  }
  std::vector<std::string> lines;
  for (const auto& [stage, fold] : folds) {
    char range[64] = "";
    if (fold.ranged) std::snprintf(range, sizeof range, ", %+.1f to %+.1f pp", fold.low * 100, fold.high * 100);
    lines.push_back("... " + (stage ? "stage " + std::to_string(*stage) + ": " : "") + std::to_string(fold.count) +
                    " more workers' bubble_ratio" + range);
  }
  if (!lines.empty())
    lines.back() += " (the " + std::to_string(kWorkerRowsShown) + " that changed most are shown; --json has them all)";
  return lines;
}

// A run that stopped opens the verdict: its figures leave the unfinished step out.
std::string StoppedVerdict(const std::vector<std::string>& stops, const std::string& verdict) {
  std::string text;
  for (const std::string& stop : stops) text += (text.empty() ? "" : "; ") + stop;
  if (text.empty()) return verdict;
  text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  return text + " Over the steps both finished: " + verdict;
}

}  // namespace

std::string DiffReport(const std::vector<MetricChange>& rows, const std::string& base_name, const std::string& new_name,
                       DiffFormat format, const std::vector<std::string>& configuration_changes,
                       const std::vector<std::string>& stops) {
  std::string changed;  // said first: runs of another configuration differ by design
  for (const std::string& change : configuration_changes) changed += (changed.empty() ? "" : ", ") + change;
  if (format == DiffFormat::kJson) {
    nlohmann::json doc = {{"base", base_name}, {"new", new_name}, {"verdict", StoppedVerdict(stops, DiffVerdict(rows))},
                          {"stops", stops}, {"configuration_changes", configuration_changes},
                          {"metrics", nlohmann::json::array()}};
    for (const MetricChange& row : rows) {
      const Verdict verdict = row.verdict();
      doc["metrics"].push_back({{"metric", row.metric}, {"base", JsonValue(row.base)}, {"new", JsonValue(row.now)},
                                {"change", JsonValue(row.change())}, {"relative", JsonValue(row.relative())},
                                {"unit", UnitName(row.unit)},
                                {"better", row.better == Better::kNeither ? nlohmann::json() : nlohmann::json(row.better == Better::kLower ? "lower" : "higher")},
                                {"verdict", verdict == Verdict::kNone ? nlohmann::json() : nlohmann::json(VerdictText(verdict))},
                                {"significance", row.significance()}, {"effect", row.effect}});
      if (row.stage) doc["metrics"].back()["group"] = "stage " + std::to_string(*row.stage);
    }
    return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  // Most significant first (DiffSummaries ranks them); "worse"/"better" by the
  // metric's direction, blank where the number alone cannot say.
  // At scale the per-worker rows would bury the rest: the most significant
  // few are shown, the others folded into one line (JSON keeps them all).
  std::vector<std::vector<std::string>> table = {{"metric", "base", "new", "change", "verdict"}};
  size_t worse = 0, better = 0;
  std::vector<const MetricChange*> shown_workers;
  for (const MetricChange& row : rows)
    if (row.metric.rfind("workers[", 0) == 0) shown_workers.push_back(&row);
  std::stable_sort(shown_workers.begin(), shown_workers.end(),
                   [](const MetricChange* a, const MetricChange* b) { return a->significance() > b->significance(); });
  if (shown_workers.size() > kWorkerRowsShown) shown_workers.resize(kWorkerRowsShown);
  for (const MetricChange& row : rows) {
    const Verdict verdict = row.verdict();
    worse += verdict == Verdict::kWorse;
    better += verdict == Verdict::kBetter;
    if (row.metric.rfind("workers[", 0) == 0 && std::find(shown_workers.begin(), shown_workers.end(), &row) == shown_workers.end())
      continue;
    table.push_back({row.metric, Value(row, row.base), Value(row, row.now), Change(row), VerdictText(verdict)});
  }
  for (const std::string& line : FoldedLines(rows, shown_workers)) table.push_back({line, "", "", "", ""});
  const std::string verdict = StoppedVerdict(stops, DiffVerdict(rows));
  const std::string tally = std::to_string(worse) + " worse, " + std::to_string(better) +
                            " better (largest effect on the step time first; pp: percentage points)";
  const std::string warning = "configuration changed: " + changed + " (the runs differ by design, not only by speed)";
  if (format == DiffFormat::kMarkdown)
    return "## jobviz diff\n\n**" + MarkdownCell(verdict) + "**\n\n" + (changed.empty() ? "" : "**" + MarkdownCell(warning) + "**\n\n") + "base: " +
           MarkdownCode(base_name, false) + ", new: " + MarkdownCode(new_name, false) + "\n\n" + tally + "\n\n" +
           MarkdownTable(table, {0});
  return verdict + "\n" + (changed.empty() ? "" : warning + "\n") + "base: " + base_name + "\nnew:  " + new_name + "\n" + tally + "\n" +
         TextTable(table);
}

}  // namespace jobviz
