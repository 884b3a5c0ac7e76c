#include "parse/hybrid_info.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <vector>

namespace jobviz {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view Trim(std::string_view text) {
  while (!text.empty() && IsSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);
  return text;
}

bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// "key: value" pairs separated by commas; a value may be a [list, with, commas].
// "sep:group" is one key (a ':' followed by a letter belongs to the key).
std::map<std::string, std::string_view> SplitFields(std::string_view text) {
  std::map<std::string, std::string_view> fields;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (IsSpace(text[i]) || text[i] == ',')) ++i;
    const size_t key_start = i;
    while (i < text.size() && !(text[i] == ':' && !(i + 1 < text.size() && IsLetter(text[i + 1])))) ++i;
    if (i >= text.size()) break;
    std::string key(Trim(text.substr(key_start, i - key_start)));
    for (char& c : key)
      if (c == ':') c = '_';
    ++i;  // the ':'
    while (i < text.size() && IsSpace(text[i])) ++i;
    const size_t value_start = i;
    if (i < text.size() && text[i] == '[') {
      const size_t close = text.find(']', i);
      i = close == std::string_view::npos ? text.size() : close + 1;
    } else {
      while (i < text.size() && text[i] != ',') ++i;
    }
    fields[key] = Trim(text.substr(value_start, i - value_start));
  }
  return fields;
}

std::optional<std::int64_t> Integer(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

// "[0, 8, 16, 24]" -> ranks; nullopt for anything else ("None", "[0, 1, ...]").
std::optional<std::vector<std::int64_t>> RankList(std::string_view text) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return std::nullopt;
  text = text.substr(1, text.size() - 2);
  std::vector<std::int64_t> ranks;
  if (Trim(text).empty()) return ranks;
  while (true) {
    const size_t comma = text.find(',');
    const auto rank = Integer(Trim(text.substr(0, comma)));
    if (!rank) return std::nullopt;
    ranks.push_back(*rank);
    if (comma == std::string_view::npos) return ranks;
    text.remove_prefix(comma + 1);
  }
}

// A rank twice in one group would put two coordinates on one rank.
std::optional<std::int64_t> Repeated(std::vector<std::int64_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  const auto twice = std::adjacent_find(ranks.begin(), ranks.end());
  return twice == ranks.end() ? std::nullopt : std::optional<std::int64_t>(*twice);
}

}  // namespace

bool ParseHybridFields(std::string_view text, std::int64_t rank, ParallelPlace* place, bool* by_coordinates,
                       std::string* error) {
  auto fields = SplitFields(text);  // colour escapes already gone (LineParser::Parse strips them)
  if (const auto tp = fields.find("tp_rank"); tp != fields.end() && !fields.count("mp_rank")) fields["mp_rank"] = tp->second;
  *place = ParallelPlace{};
  *by_coordinates = false;
  for (size_t a = 0; a < kAxes; ++a) {
    const std::string name = AxisName(static_cast<ParallelAxis>(a));
    std::optional<std::int64_t> degree;  // checked whatever else the line gives for the axis
    if (const auto it = fields.find(name + "_degree"); it != fields.end()) {
      degree = Integer(it->second);
      if (!degree || *degree < 1 || *degree > 1'000'000) {
        *error = name + "_degree is not a whole number from 1 to 1000000";
        return false;
      }
    }
    if (const auto coordinate = fields.find(name + "_rank"); coordinate != fields.end()) {
      const auto index = Integer(coordinate->second);
      if (!index || *index >= 1'000'000) {
        *error = name + "_rank is not a whole number below 1000000";
        return false;
      }
      place->index[a] = static_cast<std::int32_t>(*index);  // degree 0: not stated, the largest index + 1
      *by_coordinates = true;
      continue;
    }
    const auto group_field = fields.find(name + "_group");
    const bool has_group = group_field != fields.end() && group_field->second != "None";
    if (!has_group) {
      if (degree.value_or(1) > 1) {
        *error = name + "_degree is " + std::to_string(*degree) + " but the line has no " + name + "_group";
        return false;
      }
      place->degree[a] = static_cast<std::int32_t>(degree.value_or(1));
      continue;
    }
    const auto group = RankList(group_field->second);
    if (!group) {
      *error = name + "_group is not a list of ranks";
      return false;
    }
    if (group->size() > static_cast<size_t>(kMaxRanks)) {
      *error = name + "_group holds more ranks than a job can have (10,000,000)";
      return false;
    }
    if (const auto twice = Repeated(*group)) {
      *error = name + "_group holds rank " + std::to_string(*twice) + " twice";
      return false;
    }
    if (degree && static_cast<std::int64_t>(group->size()) != *degree) {
      *error = name + "_group holds " + std::to_string(group->size()) + " ranks but " + name + "_degree is " +
               std::to_string(*degree);
      return false;
    }
    size_t position = group->size();
    for (size_t i = 0; i < group->size(); ++i)
      if ((*group)[i] == rank) position = i;
    if (position == group->size()) {
      *error = "rank_id " + std::to_string(rank) + " is not in its own " + name + "_group";
      return false;
    }
    place->index[a] = static_cast<std::int32_t>(position);
    place->degree[a] = static_cast<std::int32_t>(group->size());
  }
  // Every axis at least as wide as the rank's coordinate on it: no product
  // of them (roles, pipelines, replicas) may pass what a job can have.
  if (RanksNeeded(*place) > kMaxRanks) {
    *error = "its degrees and coordinates multiply to more than the 10,000,000 ranks a job can have";
    return false;
  }
  return true;
}

}  // namespace jobviz
