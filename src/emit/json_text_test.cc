#include "emit/json_text.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

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
