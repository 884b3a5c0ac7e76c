#include "model/time_value.h"

#include <charconv>
#include <cstdio>
#include <limits>

namespace jobviz {

namespace {
constexpr Nanos kNanosPerMilli = 1'000'000;
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

std::optional<ParsedMillis> ParseMillis(std::string_view text) {
  const size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1);
  if (whole.empty()) return std::nullopt;
  for (char c : whole) if (!IsDigit(c)) return std::nullopt;
  for (char c : frac) if (!IsDigit(c)) return std::nullopt;

  constexpr Nanos kMaxWholeMillis = std::numeric_limits<Nanos>::max() / kNanosPerMilli - 1;
  Nanos millis = 0;
  for (char c : whole) {
    millis = millis * 10 + (c - '0');
    if (millis > kMaxWholeMillis) return std::nullopt;
  }
  Nanos sub = 0;
  Nanos scale = kNanosPerMilli;
  for (size_t i = 0; i < frac.size() && i < 6; ++i) {
    scale /= 10;
    sub += (frac[i] - '0') * scale;
  }
  return ParsedMillis{millis * kNanosPerMilli + sub, static_cast<int>(frac.size())};
}

void AppendMicros(std::string& out, Nanos ns) {
  if (ns < 0) {
    out.push_back('-');
    // -(INT64_MIN) overflows; such a value cannot come from ParseMillis.
    ns = -ns;
  }
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, ns / 1000);
  (void)ec;
  out.append(buf, end);
  const int rest = static_cast<int>(ns % 1000);
  out.push_back('.');
  out.push_back(static_cast<char>('0' + rest / 100));
  out.push_back(static_cast<char>('0' + rest / 10 % 10));
  out.push_back(static_cast<char>('0' + rest % 10));
}

std::string FormatMicros(Nanos ns) {
  std::string s;
  AppendMicros(s, ns);
  return s;
}

std::string FormatSinceStart(Nanos ns) {
  char buf[48];
  const bool negative = ns < 0;
  const std::uint64_t magnitude = negative ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  std::snprintf(buf, sizeof buf, "%c%llu.%06llu ms", negative ? '-' : '+',
                static_cast<unsigned long long>(magnitude / 1'000'000), static_cast<unsigned long long>(magnitude % 1'000'000));
  return buf;
}

std::string FormatDuration(Nanos ns) {
  char buf[48];
  const char* sign = ns < 0 ? "-" : "";
  const Nanos magnitude = ns < 0 ? -ns : ns;
  const double v = static_cast<double>(magnitude);
  if (magnitude < 1000)
    std::snprintf(buf, sizeof buf, "%s%lld ns", sign, static_cast<long long>(magnitude));
  else if (magnitude < 1'000'000) std::snprintf(buf, sizeof buf, "%s%.1f us", sign, v / 1e3);
  else if (magnitude < 1'000'000'000) std::snprintf(buf, sizeof buf, "%s%.2f ms", sign, v / 1e6);
  else std::snprintf(buf, sizeof buf, "%s%.2f s", sign, v / 1e9);
  return buf;
}

}  // namespace jobviz
