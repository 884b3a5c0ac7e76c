#include "history/history_baseline.h"

#include <algorithm>
#include <map>

namespace jobviz {

std::optional<HistoryBaselineSource> ParseHistoryBaseline(const std::string& text) {
  HistoryBaselineSource source{text, 10};
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size()) return source;
  const std::string count = text.substr(colon + 1);
  if (count.find_first_not_of("0123456789") != std::string::npos) return source;  // a ':' of the path
  if (count.size() > 6 || std::stoul(count) == 0) return std::nullopt;
  return HistoryBaselineSource{text.substr(0, colon), std::stoul(count)};
}

std::optional<nlohmann::json> BaselineOfRuns(const std::vector<LedgerRun>& runs, size_t k, std::string* described) {
  using nlohmann::json;
  std::vector<const LedgerRun*> chosen;  // the latest k that finished, newest first
  for (auto it = runs.rbegin(); it != runs.rend() && chosen.size() < k; ++it)
    if (it->record.comparable()) chosen.push_back(&*it);
  if (chosen.empty()) return std::nullopt;
  std::reverse(chosen.begin(), chosen.end());
  std::vector<double> bubble, ideal, stages, micro_batches, step;
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> what_if;  // key -> (gain, saved_us)
  json steps = json::array();
  for (const LedgerRun* run : chosen) {
    const RunRecord& r = run->record;
    bubble.push_back(r.bubble);
    if (r.ideal_bubble) ideal.push_back(*r.ideal_bubble);
    stages.push_back(r.stages);
    micro_batches.push_back(r.micro_batches);
    step.push_back(r.step_us);
    steps.push_back({{"step", run->id}, {"duration_us", r.step_us}});
    for (const RecordedWhatIf& w : r.what_ifs) {
      what_if[w.key].first.push_back(w.gain);
      what_if[w.key].second.push_back(w.saved_us);
    }
  }
  json doc = {{"bubble_ratio", Median(bubble)}, {"stages", Median(stages)}, {"micro_batches", Median(micro_batches)},
              {"steps", steps}, {"bottleneck", {{"measured_step_us", Median(step)}}},
              {"stopped", {{"kind", "finished"}}}, {"what_if", json::object()}};
  if (!ideal.empty()) doc["ideal_bubble_ratio"] = Median(ideal);
  for (const auto& [key, values] : what_if)
    doc["what_if"][key] = {{"gain", Median(values.first)}, {"saved_us", Median(values.second)}};
  *described = "the median of " + std::to_string(chosen.size()) + (chosen.size() == 1 ? " run" : " runs") + " (#" +
               std::to_string(chosen.front()->id) + (chosen.size() > 1 ? "-#" + std::to_string(chosen.back()->id) : "") +
               ") of " + chosen.front()->record.name;
  return doc;
}

}  // namespace jobviz
