// The protocol buffers wire format, appended straight into a string: no
// message objects, no generated code (Perfetto's protozero does the same).
// A nested message reserves one length byte and moves its body when the
// length turns out to need more.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace jobviz {

class ProtoWire {
 public:
  explicit ProtoWire(std::string& out) : out_(out) {}

  void Varint(std::uint32_t field, std::uint64_t value);  // uint32/64, int32/64 (two's complement), bool, enum
  void Fixed64(std::uint32_t field, std::uint64_t value);
  void Bytes(std::uint32_t field, std::string_view bytes);  // string, bytes

  // Begin returns where the message's length goes; End writes it.
  size_t BeginMessage(std::uint32_t field);
  void EndMessage(size_t length_at);

 private:
  void Tag(std::uint32_t field, std::uint32_t wire_type);
  void RawVarint(std::uint64_t value);
  std::string& out_;
};

}  // namespace jobviz
