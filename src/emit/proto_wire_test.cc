#include "emit/proto_wire.h"

#include <catch2/catch.hpp>

using jobviz::ProtoWire;

namespace {
std::string Hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : bytes) hex += std::string{digits[c >> 4], digits[c & 15]};
  return hex;
}
}  // namespace

// Byte strings from the protobuf encoding guide's examples.
TEST_CASE("Varints, fixed64 and length-delimited fields as the wire format defines them") {
  std::string out;
  ProtoWire wire(out);
  wire.Varint(1, 150);
  CHECK(Hex(out) == "089601");
  out.clear();
  wire.Bytes(2, "testing");
  CHECK(Hex(out) == "120774657374696e67");
  out.clear();
  wire.Varint(4, static_cast<std::uint64_t>(std::int64_t{-2}));  // int64 -2: ten bytes
  CHECK(Hex(out) == "20feffffffffffffffff01");
  out.clear();
  wire.Fixed64(47, 0x0102030405060708);
  CHECK(Hex(out) == "f9020807060504030201");
}

TEST_CASE("Nested messages get their length afterwards, also past one byte") {
  std::string out;
  ProtoWire wire(out);
  const size_t at = wire.BeginMessage(3);
  wire.Varint(1, 150);
  wire.EndMessage(at);
  CHECK(Hex(out) == "1a03089601");
  out.clear();
  const size_t big = wire.BeginMessage(11);
  wire.Bytes(2, std::string(200, 'x'));
  wire.EndMessage(big);
  // 200 bytes + tag + 2-byte length = 203 = 0xcb 0x01.
  CHECK(Hex(out.substr(0, 6)) == "5acb0112c801");
  CHECK(out.size() == 3 + 203);
}
