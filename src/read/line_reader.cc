#include "read/line_reader.h"

#include <algorithm>
#include <cstring>

namespace jobviz {

LineReader::LineReader(ByteSource& source, size_t block_size, size_t max_line)
    : source_(source), buffer_(block_size), max_line_(std::max(max_line, block_size)) {}

bool LineReader::Next(LineBlock* block) {
  if (failed_) return false;
  // Keep the unfinished line and top the buffer up behind it.
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  for (;;) {
    while (!eof_ && end_ < buffer_.size()) {
      const long n = source_.Read(buffer_.data() + end_, buffer_.size() - end_);
      if (n < 0) {
        failed_ = true;
        return false;
      }
      if (n == 0) eof_ = true;
      end_ += static_cast<size_t>(n);
      bytes_read_ += static_cast<size_t>(n);
    }
    if (end_ == 0) return false;

    const void* last_newline = memrchr(buffer_.data(), '\n', end_);
    if (last_newline) {
      const size_t split = static_cast<const char*>(last_newline) - buffer_.data() + 1;
      if (eof_ && split < end_) break;  // the tail is a final line without '\n'
      *block = {std::string_view(buffer_.data(), split), false, false};
      begin_ = split;
      if (begin_ == end_) begin_ = end_ = 0;
      return true;
    }
    if (eof_) break;
    // One line fills the whole buffer: grow up to the limit, then cut it.
    if (buffer_.size() < max_line_) {
      buffer_.resize(std::min(max_line_, buffer_.size() * 2));
      continue;
    }
    *block = {std::string_view(buffer_.data(), end_), false, true};
    begin_ = end_ = 0;
    return true;
  }
  // End of input: hand out everything left, its last line unterminated.
  *block = {std::string_view(buffer_.data(), end_), true, false};
  begin_ = end_ = 0;
  return true;
}

}  // namespace jobviz
