#include "write/gzip_stream.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>
#ifdef JOBVIZ_WITH_ISAL
#include <isa-l/igzip_lib.h>
#endif

namespace jobviz {

namespace {

// zlib's own gzip file functions over the descriptor.
class ZlibGzipStream : public GzipStream {
 public:
  explicit ZlibGzipStream(gzFile file) : file_(file) {}
  ~ZlibGzipStream() override {
    if (file_) gzclose(file_);
  }
  bool Write(std::string_view bytes) override {
    while (!bytes.empty()) {
      const unsigned chunk = bytes.size() > (1u << 30) ? (1u << 30) : static_cast<unsigned>(bytes.size());
      if (gzwrite(file_, bytes.data(), chunk) != static_cast<int>(chunk)) {
        int code = Z_OK;
        const char* text = gzerror(file_, &code);
        error_ = code == Z_ERRNO ? std::strerror(errno) : text;
        return false;
      }
      bytes.remove_prefix(chunk);
    }
    return true;
  }
  // gzclose writes what zlib still holds: a full disk shows here as often as in Write.
  bool Close() override {
    const int code = gzclose(file_);
    file_ = nullptr;
    if (code == Z_OK) return true;
    error_ = code == Z_ERRNO ? std::strerror(errno) : "zlib error " + std::to_string(code);
    return false;
  }

 private:
  gzFile file_;
};

#ifdef JOBVIZ_WITH_ISAL
// igzip's streaming deflate, gzip header and trailer included, its output
// written to the descriptor a buffer at a time.
class IsalGzipStream : public GzipStream {
 public:
  explicit IsalGzipStream(int fd) : fd_(fd), level_buffer_(ISAL_DEF_LVL2_DEFAULT), out_(1 << 20) {
    isal_deflate_init(&stream_);
    stream_.level = 2;
    stream_.level_buf = level_buffer_.data();
    stream_.level_buf_size = static_cast<std::uint32_t>(level_buffer_.size());
    stream_.gzip_flag = IGZIP_GZIP;
    stream_.flush = NO_FLUSH;
  }
  ~IsalGzipStream() override {
    if (fd_ >= 0) close(fd_);
  }
  bool Write(std::string_view bytes) override {
    while (!bytes.empty()) {
      const auto chunk = static_cast<std::uint32_t>(std::min<size_t>(bytes.size(), 1u << 30));
      stream_.next_in = reinterpret_cast<std::uint8_t*>(const_cast<char*>(bytes.data()));
      stream_.avail_in = chunk;
      stream_.end_of_stream = 0;
      while (stream_.avail_in > 0)
        if (!Deflate()) return false;
      bytes.remove_prefix(chunk);
    }
    return true;
  }
  bool Close() override {
    stream_.next_in = nullptr;
    stream_.avail_in = 0;
    stream_.end_of_stream = 1;
    bool ok = true;
    while (ok && stream_.internal_state.state != ZSTATE_END) ok = Deflate();
    if (close(fd_) != 0 && ok) {
      error_ = std::strerror(errno);
      ok = false;
    }
    fd_ = -1;
    return ok;
  }

 private:
  // One call of the compressor into the output buffer, then the buffer out.
  bool Deflate() {
    stream_.next_out = out_.data();
    stream_.avail_out = static_cast<std::uint32_t>(out_.size());
    if (const int code = isal_deflate(&stream_); code != COMP_OK) {
      error_ = "igzip error " + std::to_string(code);
      return false;
    }
    return WriteAll(out_.data(), out_.size() - stream_.avail_out);
  }
  bool WriteAll(const std::uint8_t* data, size_t size) {
    while (size > 0) {
      const ssize_t n = write(fd_, data, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error_ = std::strerror(n < 0 ? errno : ENOSPC);
        return false;
      }
      data += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  }

  int fd_;
  isal_zstream stream_;
  std::vector<std::uint8_t> level_buffer_;
  std::vector<std::uint8_t> out_;
};
#endif

}  // namespace

std::unique_ptr<GzipStream> OpenGzipStream(int fd) {
#ifdef JOBVIZ_WITH_ISAL
  return std::make_unique<IsalGzipStream>(fd);
#else
  gzFile file = gzdopen(fd, "wb6");
  if (!file) {
    close(fd);
    return nullptr;
  }
  return std::make_unique<ZlibGzipStream>(file);
#endif
}

const char* GzipStreamCompressor() {
#ifdef JOBVIZ_WITH_ISAL
  return "ISA-L igzip level 2";
#else
  return "zlib level 6";
#endif
}

}  // namespace jobviz
