#include "model/time_value.h"

#include <charconv>
#include <cstdio>
#include <ctime>
#include <limits>

namespace jobviz {

namespace {
bool IsDecimalDigit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

// One pass over the bytes (was four: find, two digit checks, conversion),
// the fraction scaled by a table: two calls per job line.
std::optional<ParsedMillis> ParseMillis(std::string_view text) {
  static constexpr Nanos kFractionScale[6] = {100'000, 10'000, 1'000, 100, 10, 1};  // ns per digit
  const char* p = text.data();
  const char* const end = p + text.size();
  Nanos millis = 0;
  for (; p < end && IsDecimalDigit(*p); ++p) {
    millis = millis * 10 + (*p - '0');
    if (millis > kMaxWholeMillis) return std::nullopt;
  }
  if (p == text.data()) return std::nullopt;  // no whole milliseconds
  Nanos sub = 0;
  int digits = 0;
  if (p < end) {
    if (*p++ != '.') return std::nullopt;
    for (; p < end; ++p, ++digits) {
      if (!IsDecimalDigit(*p)) return std::nullopt;
      if (digits < 6) sub += (*p - '0') * kFractionScale[digits];
    }
  }
  return ParsedMillis{millis * kNanosPerMilli + sub, digits};
}

char* WriteMicros(char* at, Nanos ns) {
  if (ns < 0) {
    *at++ = '-';
    // -(INT64_MIN) overflows; such a value cannot come from ParseMillis.
    ns = -ns;
  }
  at = std::to_chars(at, at + 20, ns / 1000).ptr;
  const int rest = static_cast<int>(ns % 1000);
  at[0] = '.';
  at[1] = static_cast<char>('0' + rest / 100);
  at[2] = static_cast<char>('0' + rest / 10 % 10);
  at[3] = static_cast<char>('0' + rest % 10);
  return at + 4;
}

void AppendMicros(std::string& out, Nanos ns) {
  char buf[kMicrosChars];
  out.append(buf, static_cast<size_t>(WriteMicros(buf, ns) - buf));
}

std::string FormatMicros(Nanos ns) {
  std::string s;
  AppendMicros(s, ns);
  return s;
}

std::string FormatUtc(Nanos time) {
  const std::time_t seconds = static_cast<std::time_t>(time / 1'000'000'000 - (time % 1'000'000'000 < 0 ? 1 : 0));
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string FormatUtcNanos(Nanos time) {
  const Nanos nanos = (time % 1'000'000'000 + 1'000'000'000) % 1'000'000'000;
  std::string text = FormatUtc(time);  // "...:07Z"
  char fraction[16];
  std::snprintf(fraction, sizeof fraction, ".%09lld", static_cast<long long>(nanos));
  text.insert(text.size() - 1, fraction);
  return text;
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
