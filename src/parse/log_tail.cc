#include "parse/log_tail.h"

#include "parse/line_formats.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>

namespace jobviz {

namespace {

constexpr size_t kShownLine = 240;
constexpr Nanos kSecond = 1'000'000'000;
constexpr Nanos kDay = 86'400 * kSecond;
constexpr Nanos kQuarterHour = 900 * kSecond;
constexpr Nanos kWidestZone = 14 * 3600 * kSecond;

bool Digits(std::string_view text, size_t at, size_t count, int* value) {
  if (at + count > text.size()) return false;
  int v = 0;
  for (size_t i = at; i < at + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    v = v * 10 + (text[i] - '0');
  }
  *value = v;
  return true;
}

// |a - b| without overflow (saturating).
Nanos Distance(Nanos a, Nanos b) {
  const Nanos d = SaturatingSub(a, b);
  return d == INT64_MIN ? INT64_MAX : d < 0 ? -d : d;
}

// Days since 1970-01-01 of a civil date (Howard Hinnant's days_from_civil).
std::int64_t DaysFromCivil(std::int64_t y, int m, int d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

std::int64_t YearOf(Nanos epoch) {
  // Civil year of a day count (civil_from_days, the year only).
  const std::int64_t z = epoch / kDay + 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const std::int64_t doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  const int month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return yoe + era * 400 + (month <= 2);
}

// The stamp read as UTC in the year nearest `near`; nullopt where that is
// past what 64-bit nanoseconds hold (a job time centuries away: its stamps
// are not read, never wrapped).
std::optional<Nanos> AsUtcNear(const GlogStamp& stamp, Nanos near) {
  const std::int64_t year = YearOf(near);
  Nanos best = 0;
  for (std::int64_t y = year - 1; y <= year + 1; ++y) {
    Nanos t = 0;
    if (__builtin_mul_overflow(DaysFromCivil(y, stamp.month, stamp.day), kDay, &t) ||
        __builtin_add_overflow(t, stamp.time_of_day, &t))
      return std::nullopt;
    if (y == year - 1 || Distance(t, near) < Distance(best, near)) best = t;
  }
  return best;
}

}  // namespace

std::optional<GlogStamp> ParseGlogStamp(std::string_view line) {
  // "I1020 09:15:07.265326 "
  if (line.size() < 22 || std::string_view("IWEF").find(line[0]) == std::string_view::npos) return std::nullopt;
  GlogStamp stamp;
  int hour = 0, minute = 0, second = 0, micros = 0;
  if (!Digits(line, 1, 2, &stamp.month) || !Digits(line, 3, 2, &stamp.day) || line[5] != ' ' ||
      !Digits(line, 6, 2, &hour) || line[8] != ':' || !Digits(line, 9, 2, &minute) || line[11] != ':' ||
      !Digits(line, 12, 2, &second) || line[14] != '.' || !Digits(line, 15, 6, &micros) ||
      (line.size() > 21 && line[21] != ' '))
    return std::nullopt;
  if (stamp.month < 1 || stamp.month > 12 || stamp.day < 1 || stamp.day > 31 || hour > 23 || minute > 59 ||
      second > 60)
    return std::nullopt;
  stamp.time_of_day = ((hour * 60 + minute) * 60 + second) * kSecond + static_cast<Nanos>(micros) * 1000;
  return stamp;
}

std::optional<Nanos> GlogZoneOffset(const GlogStamp& stamp, Nanos job_end) {
  if (job_end <= 0) return std::nullopt;
  const std::optional<Nanos> utc = AsUtcNear(stamp, job_end);
  if (!utc) return std::nullopt;
  const Nanos difference = *utc - job_end;
  const Nanos rounded = (difference >= 0 ? difference + kQuarterHour / 2 : difference - kQuarterHour / 2) /
                        kQuarterHour * kQuarterHour;
  if (rounded > kWidestZone || rounded < -kWidestZone) return std::nullopt;
  return rounded;
}

Nanos GlogStampTime(const GlogStamp& stamp, Nanos zone_offset, Nanos near) {
  const std::optional<Nanos> utc = AsUtcNear(stamp, SaturatingAdd(near, zone_offset));
  return utc ? SaturatingSub(*utc, zone_offset) : 0;  // 0: not known
}

void LogTailKeeper::Add(std::string_view block_text) {
  if (block_text.size() >= kKept) {
    tail_.assign(block_text.substr(block_text.size() - kKept));
    return;
  }
  tail_.append(block_text);
  if (tail_.size() > kKept) tail_.erase(0, tail_.size() - kKept);
}

namespace {

// Where `needle` last occurs in `text` (npos: nowhere). string_view::rfind
// compares at every position, a memcmp call each: on the 8 KiB tails of
// 2,048 logs, 5% of a whole run. Here only where its first byte is.
size_t LastIndexOf(std::string_view text, std::string_view needle) {
  if (needle.empty() || needle.size() > text.size()) return std::string_view::npos;
  size_t starts = text.size() - needle.size() + 1;  // candidates lie before this
  while (starts > 0) {
    const void* hit = memrchr(text.data(), needle.front(), starts);
    if (!hit) break;
    const size_t at = static_cast<size_t>(static_cast<const char*>(hit) - text.data());
    if (std::memcmp(text.data() + at, needle.data(), needle.size()) == 0) return at;
    starts = at;
  }
  return std::string_view::npos;
}

// The line of the last `marker` in the tail that no job line follows there
// (0: none). `lines` counts the file's lines, the last one cut or not.
std::uint64_t LineAfterJobs(std::string_view tail, std::uint64_t lines, bool ended_without_newline,
                            std::string_view marker) {
  const size_t at = LastIndexOf(tail, marker);
  if (at == std::string_view::npos) return 0;
  const size_t job = LastIndexOf(tail, LineFormats()[static_cast<size_t>(LineKind::kJob)].keyword);  // every job line holds it
  if (job != std::string_view::npos && job > at) return 0;
  const auto newlines_after = static_cast<std::uint64_t>(std::count(tail.begin() + static_cast<std::ptrdiff_t>(at), tail.end(), '\n'));
  const std::uint64_t line = lines + (ended_without_newline ? 0 : 1);
  return line > newlines_after ? line - newlines_after : 0;
}

}  // namespace

LogEnd LogTailKeeper::Finish(std::uint64_t lines, bool ended_without_newline, std::optional<Nanos> zone_offset,
                             Nanos near) const {
  LogEnd end;
  end.zone_offset = zone_offset;
  end.lines = lines;
  end.cut_mid_line = ended_without_newline;
  end.closed_line = LineAfterJobs(tail_, lines, ended_without_newline, "Profiler Stats:");
  end.training_completed_line = LineAfterJobs(tail_, lines, ended_without_newline, "Training completed");
  std::string_view text = tail_;
  if (!ended_without_newline && !text.empty() && text.back() == '\n') text.remove_suffix(1);
  // Lines from the last one back; the first may be cut by the tail's start.
  std::uint64_t line = lines;
  bool first = true;
  while (line > 0) {
    const size_t newline = text.rfind('\n');
    const bool whole = newline != std::string_view::npos || tail_.size() < kKept;
    std::string_view current = newline == std::string_view::npos ? text : text.substr(newline + 1);
    if (!current.empty() && current.back() == '\r') current.remove_suffix(1);
    if (first) {
      end.last_line = std::string(current.substr(0, kShownLine));
      first = false;
    }
    if (!whole) break;
    if (zone_offset) {
      if (const auto stamp = ParseGlogStamp(current)) {
        end.stamped = GlogStampTime(*stamp, *zone_offset, near);
        end.stamped_line = line;
        break;
      }
    } else {
      break;
    }
    if (newline == std::string_view::npos) break;
    text = text.substr(0, newline);
    --line;
  }
  return end;
}

}  // namespace jobviz
