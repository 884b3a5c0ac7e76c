#include "parse/job_line_matcher.h"

#include "parse/digit_chunks.h"

#include <array>
#include <bit>
#include <cstring>

namespace jobviz {

namespace {

constexpr bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }
constexpr bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }
constexpr bool IsWord(char c) { return IsAsciiDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
constexpr bool IsIdByte(char c) { return c != '(' && c != ')' && !IsSpace(c); }

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

constexpr bool IsCanonicalIdByte(char c) { return IsWord(c) || c == '-' || c == '.' || c == ':'; }

// A bit per byte value: kWordBit for IsWord, kIdBit for IsCanonicalIdByte.
// One load a byte, where the tests above are up to seven compares.
constexpr std::uint8_t kWordBit = 1, kIdBit = 2;
constexpr std::array<std::uint8_t, 256> kByteClasses = [] {
  std::array<std::uint8_t, 256> classes{};
  for (int c = 0; c < 256; ++c)
    classes[static_cast<size_t>(c)] = static_cast<std::uint8_t>((IsWord(static_cast<char>(c)) ? kWordBit : 0) |
                                                                 (IsCanonicalIdByte(static_cast<char>(c)) ? kIdBit : 0));
  return classes;
}();

// Moves p past the bytes of class `bit`.
void SkipClass(const char*& p, const char* end, std::uint8_t bit) {
  while (p < end && (kByteClasses[static_cast<unsigned char>(*p)] & bit) != 0) ++p;
}

// The text at *p is `literal` (its size a constant, so the compare inlines).
template <size_t N>
bool Take(const char*& p, const char* end, const char (&literal)[N]) {
  constexpr size_t kLength = N - 1;
  if (static_cast<size_t>(end - p) < kLength || std::memcmp(p, literal, kLength) != 0) return false;
  p += kLength;
  return true;
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

// TakeDigits for a number of up to seven digits (a micro-batch id), inline
// and without its loop; anything longer goes the whole way.
[[gnu::always_inline]] inline bool TakeShortDigits(const char*& p, const char* end, int max_digits, std::int64_t* value) {
  if (end - p >= 8) {
    const std::uint64_t chunk = Load8(p);
    const int count = LeadingDigits(chunk);
    if (count > 0 && count < 8 && count <= max_digits) {
      *value = static_cast<std::int64_t>(DigitsValue(chunk, count));
      p += count;
      return true;
    }
  }
  return TakeDigits(p, end, max_digits, value);
}

// The shape of every time Paddle and libjobviz print: 13 whole digits and
// 6 decimals ("1697793307000.199936"), read from three loads that do not
// wait on each other (the general way below loads eight digits at a time,
// each load waiting on the count of the one before: two times were half of
// a job line's parse). False, with nothing taken, for any other shape; the
// byte after the sixth decimal must be in the text, and not a digit.
[[gnu::always_inline]] inline bool TakePrintedMillis(const char*& p, const char* end, ParsedMillis* millis) {
  if (end - p < 22) return false;
  const std::uint64_t head = Load8(p), tail = Load8(p + 8), decimals = Load8(p + 14);
  // One branch, not four: each term is 0 where the text has the shape.
  const int off_shape = (LeadingDigits(head) ^ 8) | (LeadingDigits(tail) ^ 5) | (p[13] ^ '.') | (LeadingDigits(decimals) ^ 6);
  if (off_shape != 0) return false;
  const auto whole = static_cast<std::int64_t>(DigitsValue(head, 8) * 100'000 + DigitsValue(tail, 5));
  if (whole > kMaxWholeMillis) return false;
  *millis = {whole * kNanosPerMilli + static_cast<Nanos>(DigitsValue(decimals, 6)), 6};
  p += 20;
  return true;
}

// "<whole>[.<fraction>]" milliseconds, as ParseMillis reads them: whole
// milliseconds that fit in Nanos, the first six decimals kept. Kept out of
// line: the printed shape is taken before it, inline (two calls a job line,
// each sending the cursor through memory, cost more than the shape's test).
[[gnu::noinline]] bool TakeAnyMillis(const char*& p, const char* end, ParsedMillis* millis) {
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

[[gnu::always_inline]] inline bool TakeMillis(const char*& p, const char* end, ParsedMillis* millis) {
  return TakePrintedMillis(p, end, millis) || TakeAnyMillis(p, end, millis);
}

}  // namespace

bool ParseCanonicalJobLine(std::string_view text, size_t position, CanonicalJob* job) {
  if (position > text.size()) return false;
  const char* p = text.data() + position;
  const char* const end = text.data() + text.size();
  if (!Take(p, end, "Profiler Info: Job (")) return false;
  const char* const id = p;
  SkipClass(p, end, kIdBit);
  if (p == id) return false;
  job->id = std::string_view(id, static_cast<size_t>(p - id));
  if (!Take(p, end, "), type = ")) return false;
  const char* const type = p;
  SkipClass(p, end, kWordBit);
  if (p == type) return false;
  job->type = std::string_view(type, static_cast<size_t>(p - type));
  if (!Take(p, end, ", micro_batch_id = ") || !TakeShortDigits(p, end, 18, &job->micro_batch)) return false;
  if (!Take(p, end, ", job_start_time = ") || !TakeMillis(p, end, &job->start)) return false;
  if (!Take(p, end, ", job_end_time = ") || !TakeMillis(p, end, &job->end)) return false;
  job->record_end = static_cast<size_t>(p - text.data());
  return true;
}

bool ParseCanonicalStepLine(std::string_view text, size_t position, CanonicalStep* step) {
  if (position > text.size()) return false;
  const char* p = text.data() + position;
  const char* const end = text.data() + text.size();
  if (!Take(p, end, "NVTX range p")) return false;
  step->push = Take(p, end, "ush: ");
  if (step->push ? !TakeDigits(p, end, 12, &step->step) : !Take(p, end, "op")) return false;
  if (!Take(p, end, ", time: ") || !TakeMillis(p, end, &step->time)) return false;
  step->record_end = static_cast<size_t>(p - text.data());
  return true;
}

}  // namespace jobviz
