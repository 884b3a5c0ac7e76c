#include "cli/option_values.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>

namespace jobviz {

std::vector<std::string> SplitList(const std::string& text, char separator) {
  std::vector<std::string> items;
  size_t begin = 0;
  while (true) {
    const size_t end = text.find(separator, begin);
    items.push_back(text.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
    if (end == std::string::npos) return items;
    begin = end + 1;
  }
}

std::optional<RunChoice> ParseRunChoice(const std::string& text) {
  if (text == "last") return RunChoice{RunChoice::Kind::kLast, 0};
  if (text == "all") return RunChoice{RunChoice::Kind::kAll, 0};
  int number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || end != text.data() + text.size() || number < 1) return std::nullopt;
  return RunChoice{RunChoice::Kind::kNumber, number};
}

namespace {

// "+2.5ms" -> 2500000; nullopt unless a finite number with an optional unit.
std::optional<Nanos> ParseOffset(std::string value) {
  double scale = 1e6;  // ms
  for (const auto& [suffix, factor] : {std::pair<std::string_view, double>{"ns", 1.0}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}}) {
    if (value.size() > suffix.size() && value.compare(value.size() - suffix.size(), suffix.size(), suffix) == 0) {
      value.resize(value.size() - suffix.size());
      scale = factor;
      break;
    }
  }
  char* end = nullptr;
  const double number = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !(std::abs(number * scale) < 1e15)) return std::nullopt;
  return static_cast<Nanos>(std::llround(number * scale));
}

}  // namespace

std::optional<std::map<std::string, Nanos>> ParseClockOffsets(const std::string& text, std::string* error) {
  std::map<std::string, Nanos> offsets;
  for (const std::string& item : SplitList(text)) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      *error = "'" + item + "': expected MACHINE=OFFSET, e.g. machine1=+2.5ms";
      return std::nullopt;
    }
    const auto offset = ParseOffset(item.substr(eq + 1));
    if (!offset) {
      *error = "'" + item + "': the offset is not a number with ns, us, ms or s";
      return std::nullopt;
    }
    offsets[item.substr(0, eq)] = *offset;
  }
  return offsets;
}

std::optional<std::vector<StageRef>> ParseStageOrder(const std::string& text, std::string* error) {
  std::vector<StageRef> order;
  std::set<std::pair<std::string, int>> seen;
  for (const std::string& item : SplitList(text)) {
    const size_t colon = item.rfind(':');
    int worker = -1;
    const char* digits = colon == std::string::npos ? nullptr : item.c_str() + colon + 1;
    const char* end = item.c_str() + item.size();
    if (colon == 0 || !digits || digits == end || std::from_chars(digits, end, worker).ptr != end || worker < 0) {
      *error = "'" + item + "' is not MACHINE:WORKER";
      return std::nullopt;
    }
    if (!seen.insert({item.substr(0, colon), worker}).second) {
      *error = "'" + item + "' given twice";
      return std::nullopt;
    }
    order.push_back({item.substr(0, colon), worker, item});
  }
  return order;
}

std::vector<std::string> WhatIfChoices() {
  std::vector<std::string> choices = {"none"};
  for (int k = 0; k < static_cast<int>(WhatIfKind::kCount); ++k) choices.push_back(WhatIfKey(static_cast<WhatIfKind>(k)));
  return choices;
}

WhatIfDrawing PlanWhatIf(const std::string& key, const std::vector<OutputRequest>& outputs, bool gates) {
  WhatIfDrawing drawing;
  if (key == "none" || !DrawsWhatIf(outputs)) return drawing;
  for (int k = 0; k < static_cast<int>(WhatIfKind::kCount); ++k)
    if (key == WhatIfKey(static_cast<WhatIfKind>(k))) drawing.kind = static_cast<WhatIfKind>(k);
  drawing.draw = drawing.kind || gates || ReadsAnalysis(outputs);
  if (!drawing.kind) drawing.max_jobs = kDefaultWhatIfJobs;
  return drawing;
}

}  // namespace jobviz
