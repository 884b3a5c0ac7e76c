#include "emit/proto_wire.h"

#include <catch2/catch.hpp>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_proto_wire_test {

using jobviz::ProtoWire;

namespace {
std::string Hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : bytes) hex += std::string{digits[c >> 4], digits[c & 15]};
  return hex;
}
}  // namespace

// Byte strings from the protobuf encoding guide's examples.
TEST_CASE("Varints, fixed64 and length-delimited fields as the wire format defines them") {
  ProtoWire wire;
  wire.Varint(1, 150);
  CHECK(Hex(wire.view()) == "089601");
  wire.clear();
  wire.Bytes(2, "testing");
  CHECK(Hex(wire.view()) == "120774657374696e67");
  wire.clear();
  wire.Varint(4, static_cast<std::uint64_t>(std::int64_t{-2}));  // int64 -2: ten bytes
  CHECK(Hex(wire.view()) == "20feffffffffffffffff01");
  wire.clear();
  wire.Fixed64(47, 0x0102030405060708);
  CHECK(Hex(wire.view()) == "f9020807060504030201");
}

TEST_CASE("Nested messages get their length afterwards, also past one byte") {
  ProtoWire wire;
  const size_t at = wire.BeginMessage(3);
  wire.Varint(1, 150);
  wire.EndMessage(at);
  CHECK(Hex(wire.view()) == "1a03089601");
  wire.clear();
  const size_t big = wire.BeginMessage(11);
  wire.Bytes(2, std::string(200, 'x'));
  wire.EndMessage(big);
  // 200 bytes + tag + 2-byte length = 203 = 0xcb 0x01.
  CHECK(Hex(wire.view().substr(0, 6)) == "5acb0112c801");
  CHECK(wire.size() == 3 + 203);
}

TEST_CASE("The buffer grows behind the writes and clear() starts it over") {
  ProtoWire wire;
  const std::string payload(100, 'y');
  for (int i = 0; i < 1000; ++i) wire.Bytes(1, payload);  // 102 bytes each, far past the first room
  REQUIRE(wire.size() == 1000 * 102);
  CHECK(Hex(wire.view().substr(0, 3)) == "0a6479");
  CHECK(Hex(wire.view().substr(999 * 102, 3)) == "0a6479");
  const size_t big = wire.BeginMessage(2);
  wire.Bytes(1, std::string(300, 'z'));
  wire.EndMessage(big);
  CHECK(wire.size() == 1000 * 102 + 3 + 303);  // tag, two length bytes, the moved body
  CHECK(Hex(wire.view().substr(1000 * 102, 6)) == "12af020aac02");
  wire.clear();
  CHECK(wire.empty());
  wire.Varint(1, 1);
  CHECK(Hex(wire.view()) == "0801");
}

}  // namespace unit_proto_wire_test
