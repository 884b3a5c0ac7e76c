#include "read/line_reader.h"

#include <algorithm>
#include <cstring>

namespace jobviz {

void ReadBuffer::Grow(size_t at_least, size_t keep) {
  if (size >= at_least) return;
  std::unique_ptr<char[]> grown(new char[at_least]);  // not zeroed: every byte is read into before use
  if (keep > 0) std::memcpy(grown.get(), bytes.get(), keep);
  bytes = std::move(grown);
  size = at_least;
}

LineReader::LineReader(ByteSource& source, size_t block_size, size_t max_line, ReadBuffer* shared)
    : source_(source), buffer_(shared ? shared : &own_), capacity_(block_size), max_line_(std::max(max_line, block_size)) {
  buffer_->Grow(capacity_, 0);
}

bool LineReader::Next(LineBlock* block) {
  if (failed_) return false;
  // Keep the unfinished line and top the buffer up behind it.
  char* const data = buffer_->bytes.get();
  if (begin_ > 0) {
    std::memmove(data, data + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  for (;;) {
    char* const bytes = buffer_->bytes.get();  // (moves when a long line grows the buffer)
    while (!eof_ && end_ < capacity_) {
      const long n = source_.Read(bytes + end_, capacity_ - end_);
      if (n < 0) {
        failed_ = true;
        return false;
      }
      if (n == 0) eof_ = true;
      end_ += static_cast<size_t>(n);
      bytes_read_ += static_cast<size_t>(n);
    }
    if (end_ == 0) return false;

    const void* last_newline = memrchr(bytes, '\n', end_);
    if (last_newline) {
      const size_t split = static_cast<const char*>(last_newline) - bytes + 1;
      if (eof_ && split < end_) break;  // the tail is a final line without '\n'
      *block = {std::string_view(bytes, split), false, false};
      begin_ = split;
      if (begin_ == end_) begin_ = end_ = 0;
      return true;
    }
    if (eof_) break;
    // One line fills the whole buffer: grow up to the limit, then cut it.
    if (capacity_ < max_line_) {
      capacity_ = std::min(max_line_, capacity_ * 2);
      buffer_->Grow(capacity_, end_);
      continue;
    }
    *block = {std::string_view(bytes, end_), false, true};
    begin_ = end_ = 0;
    return true;
  }
  // End of input: hand out everything left, its last line unterminated.
  *block = {std::string_view(buffer_->bytes.get(), end_), true, false};
  begin_ = end_ = 0;
  return true;
}

}  // namespace jobviz
