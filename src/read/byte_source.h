// Where the bytes of one log come from: a plain file, a gzip file (read
// transparently, CI artifacts are usually compressed) or standard input.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace jobviz {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `capacity` bytes. Returns the count, 0 at the end, or -1 on
  // an error (then `error()` says why).
  virtual long Read(char* buffer, size_t capacity) = 0;
  const std::string& error() const { return error_; }

 protected:
  std::string error_;
};

// Opens `path` ("-" is standard input). gzip data is recognised by its magic
// bytes, not by the file name. On failure returns null and sets `error`.
std::unique_ptr<ByteSource> OpenByteSource(const std::string& path, std::string* error);

// Wraps an in-memory string (tests, fuzzing).
std::unique_ptr<ByteSource> StringByteSource(std::string contents);

}  // namespace jobviz
