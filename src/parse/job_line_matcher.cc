#include "parse/job_line_matcher.h"

#include <bit>
#include <cstring>

namespace jobviz {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }
bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }
bool IsWord(char c) { return IsAsciiDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsIdByte(char c) { return c != '(' && c != ')' && !IsSpace(c); }

// A cursor over the text; every step either consumes what it expects or
// fails, and there is never anything to take back.
class Cursor {
 public:
  Cursor(std::string_view text, size_t at) : text_(text), at_(at) {}
  size_t at() const { return at_; }

  void Spaces() {
    while (at_ < text_.size() && IsSpace(text_[at_])) ++at_;
  }
  // A literal's length is known here, so the compare inlines (a memcmp of
  // a constant size) instead of calling memcmp for each of a line's ~12.
  template <size_t N>
  bool Literal(const char (&literal)[N]) {
    constexpr size_t kLength = N - 1;
    if (text_.size() - at_ < kLength || std::memcmp(text_.data() + at_, literal, kLength) != 0) return false;
    at_ += kLength;
    return true;
  }
  // ",\s*NAME\s*=\s*"
  template <size_t N>
  bool Key(const char (&name)[N]) {
    if (!Literal(",")) return false;
    Spaces();
    if (!Literal(name)) return false;
    Spaces();
    if (!Literal("=")) return false;
    Spaces();
    return true;
  }
  // One or more bytes for which `accepts` holds, as many as there are.
  template <class Accepts>
  bool Run(Accepts accepts, std::string_view* group) {
    const size_t from = at_;
    while (at_ < text_.size() && accepts(text_[at_])) ++at_;
    *group = text_.substr(from, at_ - from);
    return at_ > from;
  }
  // \d+(?:\.\d*)?  (greedy: the '.' and its digits are taken when there).
  bool Millis(std::string_view* group) {
    const size_t from = at_;
    std::string_view digits;
    if (!Run(IsAsciiDigit, &digits)) return false;
    if (at_ < text_.size() && text_[at_] == '.') {
      ++at_;
      while (at_ < text_.size() && IsAsciiDigit(text_[at_])) ++at_;
    }
    *group = text_.substr(from, at_ - from);
    return true;
  }

 private:
  std::string_view text_;
  size_t at_;
};

}  // namespace

bool MatchJobLine(std::string_view text, size_t position, JobLineMatch* match) {
  if (position > text.size()) return false;
  Cursor c(text, position);
  if (!c.Literal("Profiler Info: Job")) return false;
  c.Spaces();
  if (!c.Literal("(")) return false;
  c.Spaces();
  if (!c.Run(IsIdByte, &match->id)) return false;
  c.Spaces();
  if (!c.Literal(")")) return false;
  if (!c.Key("type") || !c.Run(IsWord, &match->type)) return false;
  if (!c.Key("micro_batch_id") || !c.Run(IsAsciiDigit, &match->micro_batch)) return false;
  if (!c.Key("job_start_time") || !c.Millis(&match->start)) return false;
  if (!c.Key("job_end_time") || !c.Millis(&match->end)) return false;
  match->whole = text.substr(position, c.at() - position);
  return true;
}

namespace {

bool IsCanonicalIdByte(char c) { return IsWord(c) || c == '-' || c == '.' || c == ':'; }

// The text at *p is `literal` (its size a constant, so the compare inlines).
template <size_t N>
bool Take(const char*& p, const char* end, const char (&literal)[N]) {
  constexpr size_t kLength = N - 1;
  if (static_cast<size_t>(end - p) < kLength || std::memcmp(p, literal, kLength) != 0) return false;
  p += kLength;
  return true;
}

// Eight bytes at p, the first in the low byte.
std::uint64_t Load8(const char* p) {
  std::uint64_t chunk;
  std::memcpy(&chunk, p, sizeof chunk);
  return chunk;
}

// How many of the eight bytes lead with ASCII digits. A byte is a digit when
// its high nibble is 3 and adding 6 keeps it so; a carry out of a byte >=
// 0xfa only spoils bytes after the first non-digit, which do not count.
int LeadingDigits(std::uint64_t chunk) {
  constexpr std::uint64_t kHigh = 0xf0f0f0f0f0f0f0f0, kThrees = 0x3030303030303030, kSixes = 0x0606060606060606;
  const std::uint64_t not_digit = ((chunk & kHigh) ^ kThrees) | (((chunk + kSixes) & kHigh) ^ kThrees);
  return not_digit == 0 ? 8 : std::countr_zero(not_digit) / 8;
}

// The value of the first `count` (1-8) digits of the chunk: moved to its top
// bytes behind '0's, then added up in pairs, fours and eights (three multiplies).
std::uint64_t DigitsValue(std::uint64_t chunk, int count) {
  constexpr std::uint64_t kThrees = 0x3030303030303030;
  if (count < 8) chunk = (chunk << (8 * (8 - count))) | (kThrees >> (8 * count));
  chunk -= kThrees;
  chunk = (chunk * 10 + (chunk >> 8)) & 0x00ff00ff00ff00ff;
  chunk = (chunk * 100 + (chunk >> 16)) & 0x0000ffff0000ffff;
  return (chunk * 10000 + (chunk >> 32)) & 0xffffffff;
}

constexpr std::int64_t kPowersOf10[] = {1, 10, 100, 1'000, 10'000, 100'000, 1'000'000, 10'000'000, 100'000'000};

// At most `max_digits` (<= 18) decimal digits, at least one, as a number;
// eight at a time where the text has room to load them.
bool TakeDigits(const char*& p, const char* end, int max_digits, std::int64_t* value) {
  std::int64_t v = 0;
  int digits = 0;
  while (end - p >= 8) {
    const std::uint64_t chunk = Load8(p);
    const int count = LeadingDigits(chunk);
    p += count;
    digits += count;
    if (digits > max_digits) return false;  // before the value could overflow
    if (count > 0) v = v * kPowersOf10[count] + static_cast<std::int64_t>(DigitsValue(chunk, count));
    if (count < 8) {
      *value = v;
      return digits > 0;
    }
  }
  for (; p < end && IsAsciiDigit(*p); ++p) {
    if (++digits > max_digits) return false;
    v = v * 10 + (*p - '0');
  }
  *value = v;
  return digits > 0;
}

// "<whole>[.<fraction>]" milliseconds, as ParseMillis reads them: whole
// milliseconds that fit in Nanos, the first six decimals kept.
bool TakeMillis(const char*& p, const char* end, ParsedMillis* millis) {
  std::int64_t whole = 0;
  if (!TakeDigits(p, end, 13, &whole) || whole > kMaxWholeMillis) return false;
  Nanos sub = 0;
  int decimals = 0;
  if (p < end && *p == '.') {
    ++p;
    if (end - p >= 8) {
      // The first up to eight decimals at once; of those, the first six count.
      const std::uint64_t chunk = Load8(p);
      decimals = LeadingDigits(chunk);
      if (decimals > 0) {
        const auto value = static_cast<Nanos>(DigitsValue(chunk, decimals));
        sub = decimals <= 6 ? value * kPowersOf10[6 - decimals] : value / kPowersOf10[decimals - 6];
      }
      p += decimals;
      if (decimals == 8)
        for (; p < end && IsAsciiDigit(*p); ++p) ++decimals;
    } else {
      for (; p < end && IsAsciiDigit(*p); ++p, ++decimals)
        if (decimals < 6) sub += (*p - '0') * kPowersOf10[5 - decimals];
    }
  }
  *millis = {whole * kNanosPerMilli + sub, decimals};
  return true;
}

}  // namespace

bool ParseCanonicalJobLine(std::string_view text, size_t position, CanonicalJob* job) {
  if (position > text.size()) return false;
  const char* p = text.data() + position;
  const char* const end = text.data() + text.size();
  if (!Take(p, end, "Profiler Info: Job (")) return false;
  const char* const id = p;
  while (p < end && IsCanonicalIdByte(*p)) ++p;
  if (p == id) return false;
  job->id = std::string_view(id, static_cast<size_t>(p - id));
  if (!Take(p, end, "), type = ")) return false;
  const char* const type = p;
  while (p < end && IsWord(*p)) ++p;
  if (p == type) return false;
  job->type = std::string_view(type, static_cast<size_t>(p - type));
  if (!Take(p, end, ", micro_batch_id = ") || !TakeDigits(p, end, 18, &job->micro_batch)) return false;
  if (!Take(p, end, ", job_start_time = ") || !TakeMillis(p, end, &job->start)) return false;
  if (!Take(p, end, ", job_end_time = ") || !TakeMillis(p, end, &job->end)) return false;
  job->record_end = static_cast<size_t>(p - text.data());
  return true;
}

}  // namespace jobviz
