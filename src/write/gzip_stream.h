// A gzip file written through a descriptor, one piece at a time: what
// AtomicFile uses for outputs named *.gz. With ISA-L (Debian builds) igzip
// compresses at level 2, ~1 GB/s a core; without it (the Python wheel)
// zlib at level 6, ~0.1 GB/s. Either writes one standard gzip member that
// gunzip, zlib, Python and Perfetto's trace processor read.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace jobviz {

class GzipStream {
 public:
  virtual ~GzipStream() = default;
  // False once a write failed; `error()` then says why (errno's text, or the
  // compressor's).
  virtual bool Write(std::string_view bytes) = 0;
  // Writes what is held back and the gzip trailer, and closes the descriptor.
  virtual bool Close() = 0;
  const std::string& error() const { return error_; }

 protected:
  std::string error_;
};

// Takes `fd` (closed by Close or the destructor). Null when the compressor
// cannot start.
std::unique_ptr<GzipStream> OpenGzipStream(int fd);

// The compressor OpenGzipStream uses: "ISA-L igzip level 2" or "zlib level 6".
const char* GzipStreamCompressor();

}  // namespace jobviz
