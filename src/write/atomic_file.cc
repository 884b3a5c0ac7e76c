#include "write/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <cstring>

namespace jobviz {

AtomicFile::~AtomicFile() {
  gzip_.reset();
  if (file_ && !to_stdout_) {
    std::fclose(file_);
    if (!streamed_) unlink(temp_path_.c_str());
  }
}

namespace {

// Puts `temp` in the place of `target` in one step. Over an existing regular
// file the two names are exchanged (renameat2 RENAME_EXCHANGE), just as
// atomic for readers, and the old file, now under `temp`, is removed: a
// plain rename over a file makes ext4 write the new file's data out first
// (its auto_da_alloc), 15 ms for a 30 MB trace, which is the durability this
// file does not promise. Anything else (no target yet, a filesystem that
// cannot exchange, a target that is not a regular file): rename(2).
bool ReplaceFile(const std::string& temp, const std::string& target) {
#ifdef RENAME_EXCHANGE
  struct stat existing;
  if (lstat(target.c_str(), &existing) == 0 && S_ISREG(existing.st_mode) &&
      renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
    unlink(temp.c_str());
    return true;
  }
#endif
  return std::rename(temp.c_str(), target.c_str()) == 0;
}

// A run killed with SIGKILL leaves its temporary file (PATH.tmp.PID) behind;
// the next write of PATH removes those whose process is gone.
void RemoveStaleTempFiles(const std::string& path) {
  const std::filesystem::path target(path);
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  const std::string prefix = target.filename().string() + ".tmp.";
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string pid_text = name.substr(prefix.size());
    if (!std::all_of(pid_text.begin(), pid_text.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        pid_text.size() > 9)
      continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH) unlink(it->path().c_str());
  }
}

// N of "/dev/fd/N", "/proc/self/fd/N" or "/proc/<our pid>/fd/N"; "/dev/stdout" and
// its kin; -1 otherwise.
int DescriptorPath(const std::string& path) {
  if (path == "/dev/stdin") return 0;
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const std::string& prefix : {std::string("/dev/fd/"), std::string("/proc/self/fd/"),
                                    "/proc/" + std::to_string(getpid()) + "/fd/", std::string("/proc/thread-self/fd/")}) {
    if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0 || path.size() - prefix.size() > 9)
      continue;
    const std::string digits = path.substr(prefix.size());
    if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::stoi(digits);
  }
  return -1;
}

}  // namespace

int DescriptorOf(const std::string& path) {
  if (path == "-") return STDOUT_FILENO;
  std::error_code ec;
  std::filesystem::path at = std::filesystem::absolute(path, ec).lexically_normal();
  if (ec) return -1;
  // Link by link (a descriptor's own link names what it is open on, not itself).
  for (int hops = 0; hops < 40; ++hops) {
    const int fd = DescriptorPath(at.string());
    if (fd >= 0) return fcntl(fd, F_GETFD) == -1 ? -1 : fd;
    // Its directories may be links too (/proc/self is one).
    const std::filesystem::path parent = std::filesystem::canonical(at.parent_path(), ec);
    if (ec) return -1;
    const std::filesystem::path resolved = parent / at.filename();
    if (DescriptorPath(resolved.string()) >= 0) {
      at = resolved;
      continue;
    }
    if (!std::filesystem::is_symlink(resolved, ec)) return -1;
    const std::filesystem::path target = std::filesystem::read_symlink(resolved, ec);
    if (ec) return -1;
    at = (target.is_absolute() ? target : parent / target).lexically_normal();
  }
  return -1;
}

bool AtomicFile::Open(const std::string& path, bool gzip) {
  path_ = path;
  if (path == "-") {
    to_stdout_ = true;
    file_ = stdout;
    // gzip writes through its own descriptor: what stdout holds goes first.
    if (gzip && (std::fflush(stdout) != 0 || !(gzip_ = OpenGzipStream(dup(STDOUT_FILENO))))) {
      error_ = "standard output: cannot start gzip compression";
      return false;
    }
    return true;
  }
  struct stat target;
  const bool exists = stat(path.c_str(), &target) == 0;  // through symlinks
  int fd = -1;
  if (const int own = DescriptorOf(path); own >= 0) {
    // One of this process's descriptors (-o /dev/stdout > out): renaming
    // would replace the machine's /dev/stdout link, and `out` get nothing.
    streamed_ = true;
    fd = fcntl(own, F_DUPFD_CLOEXEC, 0);
  } else if (exists && !S_ISREG(target.st_mode) && !S_ISDIR(target.st_mode)) {
    // A device, FIFO or socket: renaming over it would put a regular file in
    // its place (-o /dev/null as root) or leave its reader waiting forever.
    streamed_ = true;
    fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  } else {
    // Missing directories on the way are made, as `mkdir -p` would (an
    // events file into /shared/events/ on a fresh job).
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!exists && !parent.empty() && !std::filesystem::exists(parent, ec) && !std::filesystem::create_directories(parent, ec) && ec) {
      error_ = path + ": cannot make its directory " + parent.string() + ": " + ec.message();
      return false;
    }
    RemoveStaleTempFiles(path);
    temp_path_ = path + ".tmp." + std::to_string(getpid());
    fd = open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
  if (fd < 0 || !(file_ = fdopen(fd, "w"))) {
    error_ = path + ": cannot write: " + std::strerror(errno);
    if (fd >= 0) close(fd);
    return false;
  }
  // gzip writes through its own descriptor, so fclose can still close ours.
  if (gzip && !(gzip_ = OpenGzipStream(dup(fileno(file_))))) {
    error_ = path + ": cannot start gzip compression";
    return false;
  }
  return true;
}

void AtomicFile::Write(std::string_view bytes) {
  if (!file_ || write_failed_) return;
  if (gzip_) {
    if (!gzip_->Write(bytes)) {
      write_failed_ = true;
      error_ = Target() + ": compressed write failed: " + gzip_->error();
    }
    return;
  }
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    write_failed_ = true;
    error_ = path_ + ": write failed: " + std::strerror(errno);
  }
}

std::string AtomicFile::Target() const { return to_stdout_ ? "standard output" : path_; }

// Closing writes what the compressor still holds: a full disk shows here as often as in Write.
bool AtomicFile::CloseGzip() {
  const bool ok = gzip_->Close();
  if (!ok && error_.empty()) error_ = Target() + ": compressed write failed: " + gzip_->error();
  gzip_.reset();
  return ok;
}

bool AtomicFile::Commit() {
  if (!file_) return false;
  if (to_stdout_) {
    if (gzip_) write_failed_ |= !CloseGzip();
    const bool ok = !write_failed_ && std::fflush(file_) == 0;
    if (!ok && error_.empty()) error_ = "standard output: write failed: " + std::string(std::strerror(errno));
    file_ = nullptr;
    return ok;
  }
  if (gzip_) {
    write_failed_ |= !CloseGzip();
  }
  bool ok = !write_failed_ && std::fflush(file_) == 0;
  if (!ok && error_.empty()) error_ = path_ + ": write failed: " + std::strerror(errno);
  ok &= std::fclose(file_) == 0;
  file_ = nullptr;
  if (streamed_) return ok;
  if (ok && !ReplaceFile(temp_path_, path_)) {
    error_ = path_ + ": cannot replace: " + std::strerror(errno);
    ok = false;
  }
  if (!ok) unlink(temp_path_.c_str());
  return ok;
}

}  // namespace jobviz
