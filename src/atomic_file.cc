#include "atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace jobviz {

AtomicFile::~AtomicFile() {
  if (file_ && !to_stdout_) {
    std::fclose(file_);
    unlink(temp_path_.c_str());
  }
}

bool AtomicFile::Open(const std::string& path) {
  path_ = path;
  if (path == "-") {
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
  return true;
}

void AtomicFile::Write(std::string_view bytes) {
  if (!file_ || write_failed_) return;
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
