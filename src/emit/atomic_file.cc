#include "emit/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>

namespace jobviz {

AtomicFile::~AtomicFile() {
  if (gzip_) gzclose(static_cast<gzFile>(gzip_));
  if (file_ && !to_stdout_) {
    std::fclose(file_);
    unlink(temp_path_.c_str());
  }
}

bool AtomicFile::Open(const std::string& path, bool gzip) {
  path_ = path;
  if (path == "-" && !gzip) {
    to_stdout_ = true;
    file_ = stdout;
    return true;
  }
  temp_path_ = path + ".tmp." + std::to_string(getpid());
  const int fd = open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || !(file_ = fdopen(fd, "w"))) {
    error_ = path + ": cannot write: " + std::strerror(errno);
    if (fd >= 0) close(fd);
    return false;
  }
  // gzip writes through its own descriptor, so fclose can still close ours.
  if (gzip && !(gzip_ = gzdopen(dup(fileno(file_)), "wb6"))) {
    error_ = path + ": cannot start gzip compression";
    return false;
  }
  return true;
}

void AtomicFile::Write(std::string_view bytes) {
  if (!file_ || write_failed_) return;
  if (gzip_) {
    if (gzwrite(static_cast<gzFile>(gzip_), bytes.data(), static_cast<unsigned>(bytes.size())) !=
        static_cast<int>(bytes.size())) {
      write_failed_ = true;
      error_ = path_ + ": compressed write failed";
    }
    return;
  }
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    write_failed_ = true;
    error_ = path_ + ": write failed: " + std::strerror(errno);
  }
}

bool AtomicFile::Commit() {
  if (!file_) return false;
  if (to_stdout_) {
    const bool ok = !write_failed_ && std::fflush(file_) == 0;
    if (!ok && error_.empty()) error_ = "standard output: write failed: " + std::string(std::strerror(errno));
    file_ = nullptr;
    return ok;
  }
  if (gzip_) {
    write_failed_ |= gzclose(static_cast<gzFile>(gzip_)) != Z_OK;
    gzip_ = nullptr;
  }
  bool ok = !write_failed_ && std::fflush(file_) == 0 && fsync(fileno(file_)) == 0;
  if (!ok && error_.empty()) error_ = path_ + ": write failed: " + std::strerror(errno);
  ok &= std::fclose(file_) == 0;
  file_ = nullptr;
  if (ok && std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    error_ = path_ + ": cannot replace: " + std::strerror(errno);
    ok = false;
  }
  if (!ok) unlink(temp_path_.c_str());
  return ok;
}

}  // namespace jobviz
