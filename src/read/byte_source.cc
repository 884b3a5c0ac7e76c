#include "read/byte_source.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>

namespace jobviz {

namespace {

class FdSource : public ByteSource {
 public:
  FdSource(int fd, bool owned) : fd_(fd), owned_(owned) {}
  ~FdSource() override {
    if (owned_) close(fd_);
  }
  long Read(char* buffer, size_t capacity) override {
    for (;;) {
      const ssize_t n = read(fd_, buffer, capacity);
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      error_ = std::strerror(errno);
      return -1;
    }
  }

 private:
  int fd_;
  bool owned_;
};

class GzipSource : public ByteSource {
 public:
  explicit GzipSource(gzFile file) : file_(file) { gzbuffer(file_, 1 << 18); }
  ~GzipSource() override { gzclose(file_); }
  long Read(char* buffer, size_t capacity) override {
    const unsigned chunk = capacity > (1u << 30) ? (1u << 30) : static_cast<unsigned>(capacity);
    const int n = gzread(file_, buffer, chunk);
    int code = Z_OK;
    const char* message = gzerror(file_, &code);
    // A stream cut short reads to its end like a whole one; only gzerror
    // says that the end came too early.
    if (n == 0 && code == Z_BUF_ERROR) {
      error_ = "the gzip data ends too early: the file is cut short (still being written, or copied in part?)";
      return -1;
    }
    if (n >= 0) return n;
    error_ = std::string("gzip data is corrupt: ") + (message ? message : "unknown error");
    return -1;
  }

 private:
  gzFile file_;
};

class StringSource : public ByteSource {
 public:
  explicit StringSource(std::string contents) : contents_(std::move(contents)) {}
  long Read(char* buffer, size_t capacity) override {
    const size_t n = std::min(capacity, contents_.size() - offset_);
    std::memcpy(buffer, contents_.data() + offset_, n);
    offset_ += n;
    return static_cast<long>(n);
  }

 private:
  std::string contents_;
  size_t offset_ = 0;
};

bool HasGzipMagic(int fd) {
  unsigned char magic[2];
  return pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

}  // namespace

std::unique_ptr<ByteSource> OpenByteSource(const std::string& path, std::string* error) {
  if (path == "-") {
    // A pipe cannot be peeked at: zlib reads gzip and passes anything else
    // through unchanged (its transparent mode).
    gzFile file = gzdopen(dup(STDIN_FILENO), "rb");
    if (!file) {
      *error = "cannot read standard input";
      return nullptr;
    }
    return std::make_unique<GzipSource>(file);
  }
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = std::strerror(errno);
    return nullptr;
  }
  if (HasGzipMagic(fd)) {
    gzFile file = gzdopen(fd, "rb");
    if (!file) {
      close(fd);
      *error = "cannot open gzip stream";
      return nullptr;
    }
    return std::make_unique<GzipSource>(file);
  }
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return std::make_unique<FdSource>(fd, true);
}

std::unique_ptr<ByteSource> StringByteSource(std::string contents) {
  return std::make_unique<StringSource>(std::move(contents));
}

}  // namespace jobviz
