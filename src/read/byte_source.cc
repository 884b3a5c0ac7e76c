#include "read/byte_source.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

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

// A gzip file small enough to hold whole (an events file of `jobviz
// extract`: kilobytes to megabytes) is inflated at once with libdeflate, at
// two to three times zlib's speed: zlib's inflate and crc32 took a quarter
// of reading 16,384 events files. Its members one after the other, as
// gzread reads them. Whatever libdeflate refuses (data cut short or
// corrupt, bytes after a member, more than kWholeGzipOut inflated) is left
// to zlib, which reads it as before and says what is wrong.
constexpr off_t kWholeGzipIn = 16 << 20;
constexpr size_t kWholeGzipOut = 256 << 20;

std::optional<std::string> InflateWhole(int fd, off_t size) {
  std::string in(static_cast<size_t>(size), '\0');
  for (size_t got = 0; got < in.size();) {
    const ssize_t n = pread(fd, in.data() + got, in.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    got += static_cast<size_t>(n);
  }
  const std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> inflater(
      libdeflate_alloc_decompressor(), libdeflate_free_decompressor);
  if (!inflater) return std::nullopt;
  std::string out;
  for (size_t at = 0; at < in.size();) {
    for (size_t room = std::max<size_t>(4 * in.size(), 1 << 16);; room *= 2) {
      if (out.size() + room > kWholeGzipOut) return std::nullopt;
      const size_t before = out.size();
      out.resize(before + room);
      size_t used_in = 0, used_out = 0;
      const libdeflate_result result = libdeflate_gzip_decompress_ex(
          inflater.get(), in.data() + at, in.size() - at, out.data() + before, room, &used_in, &used_out);
      out.resize(before + (result == LIBDEFLATE_SUCCESS ? used_out : 0));
      if (result == LIBDEFLATE_SUCCESS) {
        at += used_in;
        break;
      }
      if (result != LIBDEFLATE_INSUFFICIENT_SPACE) return std::nullopt;
    }
  }
  return out;
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
    struct stat st {};
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= kWholeGzipIn)
      if (std::optional<std::string> whole = InflateWhole(fd, st.st_size)) {
        close(fd);
        return std::make_unique<StringSource>(std::move(*whole));
      }
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
