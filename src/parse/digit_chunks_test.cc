#include "parse/digit_chunks.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <string>

namespace unit_digit_chunks_test {

using namespace jobviz;

TEST_CASE("A word's leading digits and their value, at every count") {
  const std::string digits = "98765432";
  for (int count = 0; count <= 8; ++count) {
    std::string text = digits.substr(0, static_cast<size_t>(count)) + std::string(8, 'x');
    if (count < 8) text[static_cast<size_t>(count)] = count % 2 ? '/' : ':';  // the bytes either side of '0'-'9'
    INFO(text);
    const std::uint64_t chunk = Load8(text.data());
    CHECK(LeadingDigits(chunk) == count);
    if (count > 0) CHECK(DigitsValue(chunk, count) == std::stoull(digits.substr(0, static_cast<size_t>(count))));
  }
  CHECK(LeadingDigits(Load8("\xfa\xff""0000000")) == 0);  // a carry out of a high byte spoils nothing before it
  CHECK(LeadingDigits(Load8("12\xff""45678")) == 2);
}

TEST_CASE("A byte in a run of bytes, and two runs compared, at every length and place") {
  for (size_t size = 0; size <= 72; ++size) {
    std::string text(size, 'a');
    CHECK_FALSE(ContainsByte(text.data(), size, '\x1b'));
    std::string other = text;
    CHECK(SameBytes(text.data(), other.data(), size));
    for (size_t at = 0; at < size; ++at) {
      INFO(size << " bytes, at " << at);
      text[at] = '\x1b';
      CHECK(ContainsByte(text.data(), size, '\x1b'));
      CHECK_FALSE(ContainsByte(text.data(), size, '\x1c'));
      CHECK_FALSE(SameBytes(text.data(), other.data(), size));
      other[at] = '\x1b';
      CHECK(SameBytes(text.data(), other.data(), size));
      text[at] = other[at] = 'a';
    }
  }
  // Bytes next to the one looked for (a borrow from a zero byte must not make a hit of its neighbour).
  const char near[] = "\x01\x00\x1a\x1c\x9b\xff\x1a\x1c\x01";
  CHECK_FALSE(ContainsByte(near + 1, 8, '\x1b'));  // one word
  CHECK(ContainsByte(near, 9, '\0'));
}

TEST_CASE("The last of a byte in a run of bytes, at every length and place, as memrchr finds it") {
  for (size_t size = 0; size <= 72; ++size) {
    std::string text(size, 'a');
    CHECK(LastByte(text.data(), size, '\n') == SIZE_MAX);
    for (size_t at = 0; at < size; ++at) {
      INFO(size << " bytes, at " << at);
      text[at] = '\n';
      CHECK(LastByte(text.data(), size, '\n') == at);
      if (at > 0) {
        text[at - 1] = '\n';  // two: the later one
        CHECK(LastByte(text.data(), size, '\n') == at);
        CHECK(LastByte(text.data(), at, '\n') == at - 1);  // the end is not looked past
        text[at - 1] = 'a';
      }
      text[at] = 'a';
    }
  }
}

}  // namespace unit_digit_chunks_test
