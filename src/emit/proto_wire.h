// The protocol buffers wire format, appended straight into a string: no
// message objects, no generated code (Perfetto's protozero does the same).
// A nested message reserves one length byte and moves its body when the
// length turns out to need more.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
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

// Appends into a buffer of its own that grows ahead of the writes: each
// field reserves room for its largest encoding with one compare, then is
// written through a pointer (a std::string's push_back per byte, with its
// checks and terminator, took as long as the packet compression).
class ProtoWire {
 public:
  // The bytes written since the last clear().
  std::string_view view() const { return {buffer_.data(), used_}; }
  size_t size() const { return used_; }
  bool empty() const { return used_ == 0; }
  void clear() { used_ = 0; }
  void Truncate(size_t size) { used_ = std::min(used_, size); }

  // A field's key: its number and wire type (0 varint, 1 fixed64, 2 length-delimited).
  static constexpr std::uint64_t Tag(std::uint32_t field, std::uint32_t wire_type) { return (field << 3) | wire_type; }

  // uint32/64, int32/64 (two's complement), bool, enum
  [[gnu::always_inline]] void Varint(std::uint32_t field, std::uint64_t value) {
    char* at = Room(kMaxVarint * 2);
    at = WriteVarint(at, Tag(field, 0));
    Commit(WriteVarint(at, value));
  }
  [[gnu::always_inline]] void Fixed64(std::uint32_t field, std::uint64_t value) {
    char* at = WriteVarint(Room(kMaxVarint + 8), Tag(field, 1));
    for (int i = 0; i < 8; ++i) *at++ = static_cast<char>((value >> (8 * i)) & 0xff);
    Commit(at);
  }
  // string, bytes: the value `head` then `tail` (no copy of the two joined first)
  [[gnu::always_inline]] void Bytes(std::uint32_t field, std::string_view head, std::string_view tail = {}) {
    const size_t size = head.size() + tail.size();
    char* at = Room(kMaxVarint * 2 + size);
    at = WriteVarint(WriteVarint(at, Tag(field, 2)), size);
    if (!head.empty()) std::memcpy(at, head.data(), head.size());
    if (!tail.empty()) std::memcpy(at + head.size(), tail.data(), tail.size());
    Commit(at + size);
  }
  // Bytes already encoded (fields worked out once and reused).
  [[gnu::always_inline]] void Raw(std::string_view encoded) {
    char* at = Room(encoded.size());
    std::memcpy(at, encoded.data(), encoded.size());
    Commit(at + encoded.size());
  }

  // Begin returns where the message's length goes; End writes it.
  [[gnu::always_inline]] size_t BeginMessage(std::uint32_t field) {
    char* at = WriteVarint(Room(kMaxVarint + 1), Tag(field, 2));
    *at++ = '\0';  // most messages are short: one length byte
    Commit(at);
    return used_ - 1;
  }
  [[gnu::always_inline]] void EndMessage(size_t length_at) {
    const size_t length = used_ - length_at - 1;
    const size_t extra = VarintSize(length) - 1;
    if (extra > 0) {  // the body moves up behind a longer length
      Room(extra);
      std::memmove(buffer_.data() + length_at + 1 + extra, buffer_.data() + length_at + 1, length);
      used_ += extra;
    }
    WriteVarint(buffer_.data() + length_at, length);
  }

 private:
  static constexpr size_t kMaxVarint = 10;
  // Where `bytes` more can be written.
  [[gnu::always_inline]] char* Room(size_t bytes) {
    if (buffer_.size() - used_ < bytes) Grow(bytes);
    return buffer_.data() + used_;
  }
  void Commit(char* end) { used_ = static_cast<size_t>(end - buffer_.data()); }
  [[gnu::noinline]] void Grow(size_t bytes) { buffer_.resize(std::max(buffer_.size() * 2, used_ + bytes + 4096)); }

  std::string buffer_;  // its size is the room; used_ of it are written
  size_t used_ = 0;
};

}  // namespace jobviz
