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
void AppendInt(std::string& out, std::int64_t value);

}  // namespace jobviz
