// Reads a log in large blocks that always end on a line boundary, so the
// parser scans the bytes in place (no per-line copies) and memory stays
// bounded by the block size, not by the size of the log.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "read/byte_source.h"

namespace jobviz {

struct LineBlock {
  // Whole lines. At the end of the input the last line may lack its '\n';
  // a line longer than the reader's limit is handed over in pieces.
  std::string_view text;
  bool ends_without_newline = false;  // the last line of `text` has no '\n'
  bool cut_line = false;              // `text` ends inside an over-long line
};

// The bytes a LineReader reads into, kept beyond it: one per thread, reused
// file after file and never zeroed. (A fresh zero-filled MiB per file cost
// a memset and a page fault per 4 KiB touched, for each of 2,048 small logs.)
struct ReadBuffer {
  std::unique_ptr<char[]> bytes;
  size_t size = 0;
  void Grow(size_t at_least, size_t keep);  // keeps the first `keep` bytes
};

class LineReader {
 public:
  static constexpr size_t kDefaultBlock = 1 << 20;
  static constexpr size_t kMaxLine = 64 << 20;

  // Reads into `shared` when given (it must outlive the reader), else into
  // a buffer of its own.
  explicit LineReader(ByteSource& source, size_t block_size = kDefaultBlock,
                      size_t max_line = kMaxLine, ReadBuffer* shared = nullptr);

  // Fills `block` with the next run of whole lines. Returns false at the end
  // of input or on a read error (then `error()` is non-empty).
  bool Next(LineBlock* block);
  const std::string& error() const { return source_.error(); }
  size_t bytes_read() const { return bytes_read_; }

 private:
  ByteSource& source_;
  ReadBuffer own_;
  ReadBuffer* buffer_;
  size_t capacity_;  // bytes of buffer_ this reader fills: the block size, doubled for long lines
  size_t max_line_;
  size_t begin_ = 0;  // first byte not yet handed out
  size_t end_ = 0;    // one past the last byte read
  size_t bytes_read_ = 0;
  bool eof_ = false;
  bool failed_ = false;
};

}  // namespace jobviz
