// A trace event's pieces gathered in a stack buffer and appended to a
// std::string in one go: the JSON writers' per-event fast path.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "write/json_text.h"
#include "model/time_value.h"

namespace jobviz {

// Gathers an event's pieces in a stack buffer and appends them to `out` in
// one go (when it fills, and at the end): a job event is ~25 pieces, and a
// string append each (a capacity check and a memmove call) was the JSON
// writer's largest cost on job-dense logs.
class EventBuffer {
 public:
  explicit EventBuffer(std::string& out) : out_(out) {}
  ~EventBuffer() { Flush(); }
  EventBuffer(const EventBuffer&) = delete;
  EventBuffer& operator=(const EventBuffer&) = delete;

  template <size_t N>
  [[gnu::always_inline]] void Lit(const char (&text)[N]) {
    Room(N - 1);
    std::memcpy(p_, text, N - 1);
    p_ += N - 1;
  }
  [[gnu::always_inline]] void Char(char c) {
    Room(1);
    *p_++ = c;
  }
  [[gnu::always_inline]] void Put(std::string_view text) {
    if (text.size() > sizeof buffer_) {  // (a very long name or path: straight through)
      Flush();
      out_.append(text);
      return;
    }
    Room(text.size());
    std::memcpy(p_, text.data(), text.size());
    p_ += text.size();
  }
  [[gnu::always_inline]] void Int(std::int64_t value) {
    Room(20);
    p_ = std::to_chars(p_, p_ + 20, value).ptr;
  }
  [[gnu::always_inline]] void Micros(Nanos ns) {
    Room(kMicrosChars);
    p_ = WriteMicros(p_, ns);
  }
  // AppendJsonString's bytes.
  void JsonString(std::string_view text) {
    if (IsPlainJson(text)) {
      Char('"');
      Put(text);
      Char('"');
      return;
    }
    Flush();
    AppendJsonString(out_, text);
  }

 private:
  [[gnu::always_inline]] void Room(size_t bytes) {
    if (static_cast<size_t>(buffer_ + sizeof buffer_ - p_) < bytes) Flush();
  }
  [[gnu::noinline]] void Flush() {
    out_.append(buffer_, static_cast<size_t>(p_ - buffer_));
    p_ = buffer_;
  }
  std::string& out_;
  char buffer_[512];
  char* p_ = buffer_;
};

}  // namespace jobviz
