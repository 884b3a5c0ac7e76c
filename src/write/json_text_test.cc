#include "write/json_text.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_json_text_test {

using namespace jobviz;

namespace {
std::string Quoted(std::string_view text) {
  std::string out;
  AppendJsonString(out, text);
  return out;
}
}  // namespace

TEST_CASE("JSON strings escape quotes, backslashes and control bytes") {
  CHECK(Quoted("a\"b\\c") == R"("a\"b\\c")");
  CHECK(Quoted(std::string("x\0y\n", 4)) == R"("x\u0000y\u000a")");
  CHECK(Quoted("\x7f") == R"("\u007f")");
}

TEST_CASE("Valid UTF-8 is kept and invalid bytes are escaped, so the result always parses") {
  CHECK(Quoted("maschine-\xc3\xa4") == "\"maschine-\xc3\xa4\"");
  CHECK(Quoted("\xff\xfe") == R"("\u00ff\u00fe")");
  CHECK(Quoted("\xe2\x82") == R"("\u00e2\u0082")");  // truncated 3-byte sequence
  for (std::string_view garbage : {"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "ok\xe2\x82\xac"}) {
    const auto parsed = nlohmann::json::parse(Quoted(garbage));
    CHECK(parsed.is_string());
  }
}

TEST_CASE("Integers") {
  std::string out;
  AppendInt(out, -42);
  AppendInt(out, 9223372036854775807);
  CHECK(out == "-429223372036854775807");
}

namespace {

// True when every code point of UTF-8 `text` is an XML 1.0 Char
// (#x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]).
bool AllXmlChars(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const size_t length = byte < 0x80 ? 1 : byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
    if (i + length > text.size()) return false;
    std::uint32_t cp = length == 1 ? byte : byte & (0xff >> (length + 1));
    for (size_t k = 1; k < length; ++k) cp = cp << 6 | (static_cast<unsigned char>(text[i + k]) & 0x3f);
    const bool ok = cp == 0x9 || cp == 0xa || cp == 0xd || (cp >= 0x20 && cp <= 0xd7ff) ||
                    (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
    if (!ok) return false;
    i += length;
  }
  return true;
}

}  // namespace

TEST_CASE("Markup text holds only characters XML allows, whatever bytes come in") {
  CHECK(MarkupText("a\xef\xbf\xbe" "b\xef\xbf\xbf") == "a\xef\xbf\xbd" "b\xef\xbf\xbd");
  CHECK(MarkupText("\xef\xbf\xbd ok") == "\xef\xbf\xbd ok");  // U+FFFD itself stays
  CHECK(MarkupText("\xef\xbf") == MarkupText(std::string("\xef\xbf")));  // a cut sequence: no read past the end
  for (const char* hostile : {"\xef\xbf\xbe", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\x01\x0b\x7f", "\xc0\xaf",
                              "\xef\xbf", "x\xff\xfey"}) {
    INFO(hostile);
    CHECK(AllXmlChars(MarkupText(hostile)));
  }
  // Every two- and three-byte sequence, valid or not.
  std::string all;
  for (int a = 0x80; a < 0x100; ++a)
    for (int b = 0x80; b < 0xc0; ++b) {
      all += static_cast<char>(a);
      all += static_cast<char>(b);
      all += '\xbf';
      all += ' ';
    }
  CHECK(AllXmlChars(MarkupText(all)));
}

TEST_CASE("Bytes F5 to FF start no UTF-8 sequence: read as Latin-1 in JSON strings and markup") {
  CHECK(ValidUtf8("\xf5\x80\xbf") == "\xc3\xb5\xc2\x80\xc2\xbf");
  CHECK(ValidUtf8("\xff\xbf\xbf") == "\xc3\xbf\xc2\xbf\xc2\xbf");
  std::string json;
  AppendJsonString(json, "\xf8\x88\x80\x80\x80");  // a strict parser accepts it, and reads the Latin-1 text
  CHECK(nlohmann::json::parse(json).get<std::string>() == ValidUtf8("\xf8\x88\x80\x80\x80"));
}

TEST_CASE("Terminal text: control characters as '?', newlines, tabs and UTF-8 kept") {
  CHECK(TerminalText("machine0\x1b[31mX\x07") == "machine0?[31mX?");
  CHECK(TerminalText("a\tb\nc\x7f") == "a\tb\nc?");
  CHECK(TerminalText("caf\xc3\xa9") == "caf\xc3\xa9");         // é stays
  CHECK(TerminalText("x\xc2\x9b" "1m") == "x?1m");              // U+009B, CSI in C1
  CHECK(TerminalText("x\x9b" "1m") == "x?1m");                  // the same as a lone byte (Latin-1)
  CHECK(TerminalText("\xc2\xa0") == "\xc2\xa0");                // U+00A0 is no control
}

TEST_CASE("Bidi controls in a name are shut in an isolate of their own; other text is left as it is") {
  const std::string fsi = "\u2068", pdi = "\u2069";
  CHECK(BidiInert("machine0 worker 1") == "machine0 worker 1");
  CHECK(BidiInert("caf\u00e9 \u2014 \u05d0") == "caf\u00e9 \u2014 \u05d0");  // E2 bytes that are no controls, RTL letters
  // A right-to-left override: closed by the PDI right after it, so what follows keeps its order.
  CHECK(BidiInert("m\u202e0 worker 1") == "m" + fsi + "\u202e" + pdi + "0 worker 1");
  for (const char* embedding : {"\u202a", "\u202b", "\u202c", "\u202d"})
    CHECK(BidiInert(std::string("a") + embedding + "b") == "a" + fsi + embedding + pdi + "b");
  // An isolate initiator needs its own PDI before ours; a PDI closes ours.
  CHECK(BidiInert("a\u2067b") == "a" + fsi + "\u2067" + pdi + pdi + "b");
  CHECK(BidiInert("a\u2069b") == "a" + fsi + "\u2069b");
  CHECK(BidiInert("\u202e") == fsi + "\u202e" + pdi);  // at the very end
  CHECK(BidiInert("\xe2\x80") == "\xe2\x80");           // a cut sequence is no control
}

}  // namespace unit_json_text_test
