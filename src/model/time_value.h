// Wall-clock instants and durations as integer nanoseconds.
//
// Worker logs print milliseconds since the epoch with 6 decimals
// (1697793307213.760986). A double holds only ~16 significant digits, so
// 1.7e18 ns would be rounded; int64 nanoseconds keep every printed digit.
#pragma once

#include <cstdint>
#include <optional>
#include <limits>
#include <string>
#include <string_view>

namespace jobviz {

using Nanos = std::int64_t;
inline constexpr Nanos kNanosPerMilli = 1'000'000;
// The ends of the time axis: an open bound, a time that never comes.
inline constexpr Nanos kLowest = std::numeric_limits<Nanos>::min();
inline constexpr Nanos kNever = std::numeric_limits<Nanos>::max();
// The most whole milliseconds a time may have: their nanoseconds, plus a fraction, fit in Nanos.
inline constexpr Nanos kMaxWholeMillis = std::numeric_limits<Nanos>::max() / kNanosPerMilli - 1;

struct ParsedMillis {
  Nanos ns = 0;
  int decimals = 0;  // digits after the '.', as printed
};

// Parses "<digits>[.<digits>]" milliseconds exactly. Digits beyond the
// sixth decimal (below a nanosecond) are dropped. Returns nullopt on an
// empty, non-numeric or overflowing value.
std::optional<ParsedMillis> ParseMillis(std::string_view text);

// Appends `ns` as microseconds with exactly three decimals
// ("1697793307213760.986"), the unit of Chrome/Perfetto JSON traces.
void AppendMicros(std::string& out, Nanos ns);
// The same bytes at `at`, which has room for kMicrosChars; returns one past the last.
inline constexpr size_t kMicrosChars = 25;  // '-', 17 digits, '.', 3 digits, with room to spare
char* WriteMicros(char* at, Nanos ns);
std::string FormatMicros(Nanos ns);
// `ns` as a number of microseconds (fractional): the summary JSON's unit.
inline double ToMicros(Nanos ns) { return static_cast<double>(ns) / 1000.0; }

// "2026-11-22T07:00:00Z" (whole seconds; the origin is one).
std::string FormatUtc(Nanos time);
// "2023-10-20T09:15:07.213760986Z": to the nanosecond.
std::string FormatUtcNanos(Nanos time);

// A time after the run start, exact to the nanosecond the logs give:
// "+403.315018 ms" (what the reports and the HTML tooltip show).
std::string FormatSinceStart(Nanos ns);

// Sums of times that cannot wrap around: absurd inputs (jobs decades long)
// saturate at the int64 limits instead of turning negative.
inline Nanos SaturatingAdd(Nanos a, Nanos b) {
  Nanos sum;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? INT64_MAX : INT64_MIN;
}
inline Nanos SaturatingSub(Nanos a, Nanos b) {
  Nanos difference;
  if (!__builtin_sub_overflow(a, b, &difference)) return difference;
  return b < 0 ? INT64_MAX : INT64_MIN;
}

// Human-readable duration for reports: "850 ns", "12.3 us", "4.56 ms", "7.89 s".
std::string FormatDuration(Nanos ns);

}  // namespace jobviz
