// The protocol buffers wire format, appended straight into a string: no
// message objects, no generated code (Perfetto's protozero does the same).
// A nested message reserves one length byte and moves its body when the
// length turns out to need more.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace jobviz {

// Inline, all of it: a job's packet is ~20 varints and a few nested
// messages, and a call per varint (the out-of-line version) was 12% of a
// protobuf run on job-dense logs.
inline size_t VarintSize(std::uint64_t value) {
  size_t size = 1;
  while (value >= 0x80) value >>= 7, ++size;
  return size;
}

// Returns one past the last byte written.
inline char* WriteVarint(char* at, std::uint64_t value) {
  while (value >= 0x80) {
    *at++ = static_cast<char>(0x80 | (value & 0x7f));
    value >>= 7;
  }
  *at++ = static_cast<char>(value);
  return at;
}

class ProtoWire {
 public:
  explicit ProtoWire(std::string& out) : out_(out) {}

  // uint32/64, int32/64 (two's complement), bool, enum
  void Varint(std::uint32_t field, std::uint64_t value) {
    Tag(field, 0);
    RawVarint(value);
  }
  void Fixed64(std::uint32_t field, std::uint64_t value) {
    Tag(field, 1);
    char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((value >> (8 * i)) & 0xff);
    out_.append(bytes, sizeof bytes);
  }
  void Bytes(std::uint32_t field, std::string_view bytes) {  // string, bytes
    Tag(field, 2);
    RawVarint(bytes.size());
    out_.append(bytes);
  }

  // Begin returns where the message's length goes; End writes it.
  size_t BeginMessage(std::uint32_t field) {
    Tag(field, 2);
    out_.push_back('\0');  // most messages are short: one length byte
    return out_.size() - 1;
  }
  void EndMessage(size_t length_at) {
    const size_t length = out_.size() - length_at - 1;
    const size_t extra = VarintSize(length) - 1;
    if (extra > 0) out_.insert(length_at + 1, extra, '\0');
    WriteVarint(&out_[length_at], length);
  }

 private:
  void Tag(std::uint32_t field, std::uint32_t wire_type) { RawVarint((field << 3) | wire_type); }
  void RawVarint(std::uint64_t value) {
    if (value < 0x80) {  // tags, small ids and lengths: most varints are one byte
      out_.push_back(static_cast<char>(value));
      return;
    }
    char bytes[10];
    out_.append(bytes, static_cast<size_t>(WriteVarint(bytes, value) - bytes));
  }
  std::string& out_;
};

}  // namespace jobviz
