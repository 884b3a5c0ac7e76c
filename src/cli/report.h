// What jobviz tells the user on stderr: errors with a reason and a hint,
// warnings, and the short report of what was read, used and skipped.
#pragma once

#include <cstdio>
#include <string>

#include "model/model.h"

namespace jobviz {

// Shows `line` with non-printable bytes as '?', so the caret under
// `column` stays aligned, followed by a caret line. Both indented by 4.
std::string QuoteLineWithCaret(const std::string& line, size_t column);

// "file:line:col: reason (detail)" plus the quoted line.
std::string FormatSkippedLine(const SkippedLine& skipped);

// Appends the "skipped N lines" block: counts by reason and the first
// examples of each.
void AppendSkipReport(std::string& out, const SkipTally& tally);

// Everything jobviz prints about a run goes through TerminalText (names
// come from directories and logs).
void PrintError(const std::string& message, const std::string& hint = "");
void PrintWarning(const std::string& message);
void PrintReport(const std::string& text);

// While one is alive (on the main thread), PrintError, PrintWarning and
// PrintReport add to its text instead of stderr: `jobviz follow` runs the
// stages every few seconds and says what they say only when it changed.
class MessageCapture {
 public:
  MessageCapture();
  ~MessageCapture();
  MessageCapture(const MessageCapture&) = delete;
  MessageCapture& operator=(const MessageCapture&) = delete;
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::string* outer_;
};

// "1.23 GB" style sizes.
std::string FormatBytes(std::uint64_t bytes);

}  // namespace jobviz
