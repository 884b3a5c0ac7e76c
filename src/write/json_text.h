// Small helpers to write JSON text directly: the traces hold hundreds of
// thousands of events, and building a DOM for them would cost more memory
// than the parsed logs themselves.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace jobviz {

// Appends `text` as a JSON string literal (with quotes). Valid UTF-8 is kept;
// other bytes >= 0x80 (garbage in logs) are written as \u00XX.
void AppendJsonString(std::string& out, std::string_view text);
// True when a byte, or all of `text`, goes into a JSON string as it is:
// printable ASCII, no quote or backslash.
inline bool IsPlainJsonByte(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte >= 0x20 && byte < 0x7f && c != '"' && c != '\\';
}
inline bool IsPlainJson(std::string_view text) {
  for (char c : text)
    if (!IsPlainJsonByte(c)) return false;
  return true;
}
void AppendInt(std::string& out, std::int64_t value);

// `text` with every byte that is not part of valid UTF-8 read as Latin-1
// (0xE9 -> U+00E9), as AppendJsonString writes it: for JSON libraries that
// refuse invalid UTF-8 (nlohmann::json's dump throws).
std::string ValidUtf8(std::string_view text);

// Text for a terminal: control characters (C0 but newline and tab, DEL,
// and C1 as UTF-8) as '?', bytes that are not valid UTF-8 read as Latin-1,
// so that a name from a directory or a log cannot move the cursor, recolour
// the screen or ring the bell when jobviz prints it.
std::string TerminalText(std::string_view text);

// Text for XML and HTML element content and attribute values (JUnit, the
// HTML report): the five special characters escaped, bytes that are not
// valid UTF-8 read as Latin-1, control characters XML 1.0 forbids as '?', and
// U+FFFE and U+FFFF (no XML characters either) as U+FFFD.
std::string MarkupText(const std::string& text);

// `text` with every explicit bidirectional control (U+202A-U+202E
// embeddings and overrides, U+2066-U+2069 isolates) shut inside an isolate
// of its own (FSI ... PDI), so that a name holding one (a right-to-left
// override in a machine's name) cannot reorder the page's text around it
// (Unicode's bidi algorithm, UAX #9: a PDI ends every embedding and override
// begun inside its isolate). Text without them comes back as it is.
std::string BidiInert(std::string_view text);

// Appends one JSON object member by member, straight into `out`:
//   JsonMembers(out).Int("pid", 1).String("name", "x").Close();  ->  {"pid":1,"name":"x"}
// Keys are escaped when they need it (machine names), values as their type says.
class JsonMembers {
 public:
  explicit JsonMembers(std::string& out) : out_(out) { out_ += '{'; }
  JsonMembers& Int(std::string_view key, std::int64_t value);
  JsonMembers& String(std::string_view key, std::string_view value);
  JsonMembers& Micros(std::string_view key, std::int64_t nanos);  // exact decimal microseconds
  JsonMembers& Raw(std::string_view key, std::string_view json);   // a value already in JSON
  // Starts a nested object under `key`: JsonMembers(members.Object("args")).
  std::string& Object(std::string_view key);
  void Close() { out_ += '}'; }

 private:
  std::string& Key(std::string_view key);
  std::string& out_;
  bool first_ = true;
};

}  // namespace jobviz
