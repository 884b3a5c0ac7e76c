#include "parse/event_fast.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace jobviz {

namespace {

// Whether `text` starts with the string literal: a compare of a size known
// at compile time, which the compiler makes a load or two. (Through
// string_view::starts_with, the size was a variable: a call to memcmp per
// key, 10% of reading the events of 131,072 GPUs.)
template <size_t N>
[[gnu::always_inline]] inline bool StartsWith(std::string_view text, const char (&literal)[N]) {
  constexpr size_t n = N - 1;
  static_assert(n <= 16, "a key of at most 16 bytes: two words");
  if (text.size() < n) return false;
  std::uint64_t got[2] = {0, 0}, want[2] = {0, 0};  // the first 8 bytes, the last 8 (overlapping)
  std::memcpy(&got[0], text.data(), std::min<size_t>(n, 8));
  std::memcpy(&want[0], literal, std::min<size_t>(n, 8));
  if constexpr (n > 8) {
    std::memcpy(&got[1], text.data() + n - 8, 8);
    std::memcpy(&want[1], literal + n - 8, 8);
  }
  return got[0] == want[0] && got[1] == want[1];
}

// Reads the string literal off the front of `text`.
template <size_t N>
[[gnu::always_inline]] inline bool Take(std::string_view& text, const char (&literal)[N]) {
  if (!StartsWith(text, literal)) return false;
  text.remove_prefix(N - 1);
  return true;
}

// A JSON integer that is not negative and fits in an int64: digits, no
// leading zero (JSON has none), at most 19 of them.
[[gnu::always_inline]] inline bool TakeCount(std::string_view& text, std::int64_t* value) {
  size_t digits = 0;
  std::uint64_t v = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    if (digits == 19) return false;
    v = v * 10 + static_cast<std::uint64_t>(text[digits] - '0');
    ++digits;
  }
  if (digits == 0 || (digits > 1 && text[0] == '0') || v > static_cast<std::uint64_t>(INT64_MAX)) return false;
  *value = static_cast<std::int64_t>(v);
  text.remove_prefix(digits);
  return true;
}

// A JSON string without escapes, of printable ASCII (other bytes: the JSON
// reader checks their UTF-8); `text` starts after its opening quote.
[[gnu::always_inline]] inline bool TakePlainString(std::string_view& text, std::string_view* value) {
  size_t end = 0;
  while (end < text.size() && text[end] != '"') {
    const auto c = static_cast<unsigned char>(text[end]);
    if (c < 0x20 || c >= 0x80 || c == '\\') return false;
    ++end;
  }
  if (end == text.size()) return false;
  *value = text.substr(0, end);
  text.remove_prefix(end + 1);
  return true;
}

// `,"l":L` with L a line number.
bool TakeLine(std::string_view& text, LogRecord* record) {
  std::int64_t line = 0;
  if (!Take(text, ",\"l\":") || !TakeCount(text, &line) || line < 1) return false;
  record->line = static_cast<std::uint64_t>(line);
  return true;
}

// The end every record shares: `[,"th":TH],"w":W}`, in the ranges the JSON
// reader accepts.
bool TakeThreadAndWorker(std::string_view& text, std::int64_t* worker, LogRecord* record) {
  std::int64_t thread = 0;
  if (Take(text, ",\"th\":") && (!TakeCount(text, &thread) || thread > static_cast<std::int64_t>(UINT32_MAX))) return false;
  if (!Take(text, ",\"w\":") || !TakeCount(text, worker) || *worker > INT32_MAX || text != "}") return false;
  record->thread = static_cast<std::uint32_t>(thread);
  return true;
}

// A step number or micro-batch: below the run stride (StepAt).
bool TakeStep(std::string_view& text, std::int64_t* value) { return TakeCount(text, value) && *value < kRunStride; }

// {"end":END,"k":"window","l":L,"step":STEP[,"th":TH],"w":W}
bool ReadWindow(std::string_view line, std::int64_t* worker, LogRecord* record) {
  std::int64_t end = 0, step = 0;
  if (!Take(line, "{\"end\":") || !TakeStep(line, &end) || !Take(line, ",\"k\":\"window\"") || !TakeLine(line, record) ||
      !Take(line, ",\"step\":") || !TakeStep(line, &step) || !TakeThreadAndWorker(line, worker, record))
    return false;
  record->kind = RecordKind::kProfilerWindow;
  record->step = step;
  record->window_end_step = end;
  return true;
}

// `[N,N,N,N,N]`: kAxes counts below 1,000,000 (a degree may be it).
bool TakeAxes(std::string_view& text, std::int64_t limit, std::int32_t* values) {
  if (!Take(text, "[")) return false;
  for (size_t a = 0; a < kAxes; ++a) {
    std::int64_t value = 0;
    if ((a > 0 && !Take(text, ",")) || !TakeCount(text, &value) || value > limit) return false;
    values[a] = static_cast<std::int32_t>(value);
  }
  return Take(text, "]");
}

// {"at":[..],"k":"topology"|"hybrid","l":L,"of":[..],"rank":R[,"th":TH],"w":W}
bool ReadTopology(std::string_view line, std::int64_t* worker, LogRecord* record) {
  ParallelPlace place;
  std::int64_t rank = 0;
  if (!Take(line, "{\"at\":") || !TakeAxes(line, 999'999, place.index.data())) return false;
  RecordKind kind;
  if (Take(line, ",\"k\":\"topology\"")) kind = RecordKind::kShimTopology;
  else if (Take(line, ",\"k\":\"hybrid\"")) kind = RecordKind::kHybridInfo;
  else return false;
  if (!TakeLine(line, record) || !Take(line, ",\"of\":") || !TakeAxes(line, 1'000'000, place.degree.data()) ||
      !Take(line, ",\"rank\":") || !TakeCount(line, &rank) || !TakeThreadAndWorker(line, worker, record))
    return false;
  for (size_t a = 0; a < kAxes; ++a)
    if (place.degree[a] > 0 && place.index[a] >= place.degree[a]) return false;
  if (rank >= kRunStride || rank >= kMaxRanks || RanksNeeded(place) > kMaxRanks) return false;
  record->kind = kind;
  record->rank = rank;
  record->place = place;
  return true;
}

}  // namespace

bool ReadCanonicalRecord(std::string_view line, std::int64_t* worker, LogRecord* record) {
  if (StartsWith(line, "{\"e\":")) return ReadCanonicalJob(line, worker, record);
  if (StartsWith(line, "{\"end\":")) return ReadWindow(line, worker, record);  // (the end line's "end" is a string)
  if (StartsWith(line, "{\"at\":")) return ReadTopology(line, worker, record);
  return false;
}

bool ReadCanonicalJob(std::string_view line, std::int64_t* worker, LogRecord* record) {
  std::int64_t start = 0, end = 0, micro_batch = 0, number = 0, thread = 0;
  std::string_view id, type;
  if (!Take(line, "{\"e\":") || !TakeCount(line, &end) || !Take(line, ",\"id\":\"") || !TakePlainString(line, &id) ||
      !Take(line, ",\"k\":\"job\",\"l\":") || !TakeCount(line, &number) || !Take(line, ",\"mb\":") ||
      !TakeCount(line, &micro_batch) || !Take(line, ",\"s\":") || !TakeCount(line, &start) ||
      !Take(line, ",\"t\":\"") || !TakePlainString(line, &type))
    return false;
  if (Take(line, ",\"th\":") && !TakeCount(line, &thread)) return false;
  if (!Take(line, ",\"w\":") || !TakeCount(line, worker) || line != "}") return false;
  // What the JSON reader would refuse or skip (event_file.cc RecordFrom), it says.
  if (start == 0 || end == 0 || end < start || end - start > kLongestJob || number < 1 ||
      !FitsAJob(micro_batch, static_cast<std::uint64_t>(number)) ||
      thread > static_cast<std::int64_t>(UINT32_MAX) || *worker > INT32_MAX)
    return false;
  record->kind = RecordKind::kJob;
  record->start = start;
  record->end = end;
  record->micro_batch = micro_batch;
  record->line = static_cast<std::uint64_t>(number);
  record->thread = static_cast<std::uint32_t>(thread);
  record->type = Name(type);
  record->job_id = Name(id);
  return true;
}

}  // namespace jobviz
