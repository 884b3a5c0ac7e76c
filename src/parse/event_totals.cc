// A log's figures in the events format: its skipped lines (counts and the
// first examples), how it ends, and an open stream's totals line that holds
// both (parse/event_json.h).
#include "parse/event_json.h"

#include <charconv>
#include <map>

#include "write/json_text.h"

namespace jobviz::event_json {

using nlohmann::json;

json SkipsJson(const SkipTally& tally) {
  json counts = json::object(), examples = json::array();
  for (size_t r = 0; r < static_cast<size_t>(SkipReason::kCount); ++r)
    if (tally.count(static_cast<SkipReason>(r))) counts[std::to_string(r)] = tally.count(static_cast<SkipReason>(r));
  for (const SkippedLine& s : tally.examples())
    examples.push_back({{"reason", static_cast<int>(s.reason)}, {"file", ValidUtf8(s.file)}, {"line", s.line},
                        {"column", s.column}, {"text", ValidUtf8(s.text)}, {"detail", ValidUtf8(s.detail)}});
  return {{"counts", counts}, {"examples", examples}};
}

size_t SkipReasonFrom(const std::string& text) {
  size_t reason = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), reason);
  if (ec != std::errc() || end != text.data() + text.size() || reason >= static_cast<size_t>(SkipReason::kCount))
    throw std::runtime_error("unknown skip reason '" + text + "'");
  return reason;
}

// The skipped lines of a file of `lines` lines: they add up to at most that
// (checked as they are added, so that counts near 2^64 cannot wrap around).
SkipTally SkipsFrom(const json& j, std::uint64_t lines) {
  // Examples first (they are the first of each reason), then the remaining counts.
  SkipTally tally;
  std::map<size_t, std::uint64_t> remaining;
  const json& counts = j.at("counts");
  std::uint64_t total = 0;
  for (const auto& item : counts.items()) {
    const size_t reason = SkipReasonFrom(item.key());
    const std::uint64_t count = CountAt(counts, item.key().c_str());
    if (count > lines - total)
      throw std::runtime_error("more skipped lines than the file's " + std::to_string(lines) + " lines");
    total += count;
    remaining[reason] = count;
  }
  for (const json& e : j.at("examples")) {
    const size_t reason = SkipReasonFrom(std::to_string(Int64At(e, "reason")));
    if (remaining[reason] == 0) throw std::runtime_error("more skip examples than skipped lines");
    tally.Add({static_cast<SkipReason>(reason), e.at("file"), CountAt(e, "line"), CountAt(e, "column"), e.at("text"),
               e.at("detail")});
    --remaining[reason];
  }
  for (const auto& [reason, count] : remaining) tally.AddCount(static_cast<SkipReason>(reason), count);
  return tally;
}

json EndJson(const LogEnd& end) {
  json j = {{"last_line", ValidUtf8(end.last_line)}, {"cut", end.cut_mid_line}, {"stamped", end.stamped},
            {"stamped_line", end.stamped_line}};
  if (end.zone_offset) j["zone"] = *end.zone_offset;  // the writer's offset from UTC (older files: none)
  // The lines that say the process or the run ended (older files: none).
  if (end.closed_line != 0) j["closed_line"] = end.closed_line;
  if (end.training_completed_line != 0) j["completed_line"] = end.training_completed_line;
  return j;
}

LogEnd EndFrom(const json& end, std::uint64_t lines) {
  LogEnd out;
  out.lines = lines;
  out.last_line = end.at("last_line").get<std::string>();
  out.cut_mid_line = end.at("cut").get<bool>();
  out.stamped = Int64At(end, "stamped");
  out.stamped_line = CountAt(end, "stamped_line");
  if (out.stamped < 0) throw std::runtime_error("'stamped' is a negative time");
  if (end.contains("closed_line")) out.closed_line = CountAt(end, "closed_line");
  if (end.contains("completed_line")) out.training_completed_line = CountAt(end, "completed_line");
  if (end.contains("zone")) {
    constexpr std::int64_t kWidestZone = 14LL * 3600 * 1'000'000'000;
    const std::int64_t zone = Int64At(end, "zone");
    if (zone < -kWidestZone || zone > kWidestZone) throw std::runtime_error("'zone' is past 14 hours from UTC");
    out.zone_offset = zone;
  }
  return out;
}

json TotalsJson(int worker, const WorkerLogScan& scan) {
  return {{"w", worker}, {"k", "totals"}, {"bytes", scan.bytes}, {"lines", scan.lines},
          {"skipped", SkipsJson(scan.skipped)}, {"end", EndJson(scan.end)}};
}

LogTotals TotalsFrom(const json& j) {
  LogTotals totals;
  totals.bytes = CountAt(j, "bytes");
  totals.lines = CountAt(j, "lines");
  totals.skipped = SkipsFrom(j.at("skipped"), totals.lines);
  totals.end = EndFrom(j.at("end"), totals.lines);
  return totals;
}

}  // namespace jobviz::event_json
