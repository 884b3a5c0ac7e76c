#include "parse/event_fast.h"

namespace jobviz {

namespace {

// Reads `literal` off the front of `text`.
bool Take(std::string_view& text, std::string_view literal) {
  if (!text.starts_with(literal)) return false;
  text.remove_prefix(literal.size());
  return true;
}

// A JSON integer that is not negative and fits in an int64: digits, no
// leading zero (JSON has none), at most 19 of them.
bool TakeCount(std::string_view& text, std::int64_t* value) {
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
bool TakePlainString(std::string_view& text, std::string_view* value) {
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

}  // namespace

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
  if (start == 0 || end == 0 || end < start || end - start > kLongestJob || micro_batch >= kRunStride || number < 1 ||
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
