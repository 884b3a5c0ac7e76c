#include "cli/report.h"

#include "write/json_text.h"

namespace jobviz {

std::string QuoteLineWithCaret(const std::string& line, size_t column) {
  std::string shown = "    ";
  for (unsigned char c : line) shown.push_back(c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?');
  shown += "\n    " + std::string(std::min(column, line.size()), ' ') + "^";
  return shown;
}

std::string FormatSkippedLine(const SkippedLine& skipped) {
  std::string out = skipped.file + ":" + std::to_string(skipped.line) + ":" +
                    std::to_string(skipped.column + 1) + ": " + SkipReasonText(skipped.reason);
  if (!skipped.detail.empty()) out += ": " + skipped.detail;
  if (!skipped.text.empty()) out += "\n" + QuoteLineWithCaret(skipped.text, skipped.column);
  return out;
}

void AppendSkipReport(std::string& out, const SkipTally& tally) {
  const std::uint64_t total = tally.total();
  if (total == 0) return;
  out += "jobviz: skipped " + std::to_string(total) + (total == 1 ? " line:" : " lines:");
  std::string sep = " ";
  for (size_t r = 0; r < static_cast<size_t>(SkipReason::kCount); ++r) {
    const auto reason = static_cast<SkipReason>(r);
    if (tally.count(reason) == 0) continue;
    out += sep + std::to_string(tally.count(reason)) + " " + SkipReasonText(reason);
    sep = ", ";
  }
  out += "\n";
  // Jobs never timed (communication jobs print 0.000000) are normal: a
  // count, not examples as for errors.
  for (size_t r = 0; r < static_cast<size_t>(SkipReason::kCount); ++r)
    for (const SkippedLine& example : tally.examples())
      if (static_cast<size_t>(example.reason) == r && example.reason != SkipReason::kTimerNeverFired)
        out += "  " + FormatSkippedLine(example) + "\n";
}

namespace {

std::string* captured = nullptr;  // MessageCapture's text while one is alive

void Say(const std::string& text) {
  if (captured) *captured += text;
  else std::fputs(text.c_str(), stderr);
}

}  // namespace

MessageCapture::MessageCapture() : outer_(captured) { captured = &text_; }
MessageCapture::~MessageCapture() { captured = outer_; }

void PrintError(const std::string& message, const std::string& hint) {
  Say("jobviz: error: " + TerminalText(message) + "\n");
  if (!hint.empty()) Say("  hint: " + TerminalText(hint) + "\n");
}

void PrintWarning(const std::string& message) { Say("jobviz: warning: " + TerminalText(message) + "\n"); }

void PrintReport(const std::string& text) { Say(TerminalText(text)); }

std::string FormatBytes(std::uint64_t bytes) {
  char buf[32];
  const double b = static_cast<double>(bytes);
  if (bytes < 1000) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else if (bytes < 1000 * 1000) std::snprintf(buf, sizeof buf, "%.1f kB", b / 1e3);
  else if (bytes < 1000ull * 1000 * 1000) std::snprintf(buf, sizeof buf, "%.1f MB", b / 1e6);
  else std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
  return buf;
}

}  // namespace jobviz
