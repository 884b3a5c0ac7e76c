#include "read/file_follower.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <memory>

namespace jobviz {

FileFollower::FileFollower(std::string path) : path_(std::move(path)) {}

FileFollower::~FileFollower() { Close(); }

void FileFollower::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

// A new file at the path, or the old one cut short: read from its start.
void FileFollower::StartOver() {
  offset_ = 0;
  held_.clear();
  head_.clear();
  dropping_ = false;
}

// Opens the path; where reading was (offset, held line, head) stays, for
// the caller to keep (the same file, or a copy of it) or StartOver.
bool FileFollower::Open() {
  // A FIFO opens at once without a writer (O_NONBLOCK), and never blocks a read.
  fd_ = path_ == "-" ? ::dup(STDIN_FILENO) : ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) {
    if (errno != ENOENT) error_ = std::strerror(errno);
    return false;
  }
  struct stat st{};
  if (::fstat(fd_, &st) != 0) {
    error_ = std::strerror(errno);
    Close();
    return false;
  }
  stream_ = S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode);
  if (!S_ISREG(st.st_mode) && !stream_) {
    error_ = "not a regular file";
    Close();
    return false;
  }
  if (stream_) ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  was_open_ = true;
  return true;
}

// Whole lines go out; the rest waits in held_. A line that outgrows
// kMaxHeldLine is dropped up to its newline, which goes out alone.
void FileFollower::HandOut(const char* data, size_t size, std::string* lines) {
  while (size > 0) {
    const void* newline = std::memchr(data, '\n', size);
    if (dropping_) {
      if (!newline) {
        bytes_dropped_ += size;
        return;
      }
      const size_t upto = static_cast<size_t>(static_cast<const char*>(newline) - data);
      bytes_dropped_ += upto;
      lines->push_back('\n');
      dropping_ = false;
      data += upto + 1;
      size -= upto + 1;
      continue;
    }
    if (!newline) {
      held_.append(data, size);
      if (held_.size() > kMaxHeldLine) {
        bytes_dropped_ += held_.size();
        std::string().swap(held_);
        dropping_ = true;
        cut_began_ = true;
      }
      return;
    }
    // Up to the last newline of the block: whole lines, with what was held first.
    const void* last = memrchr(data, '\n', size);
    const size_t whole = static_cast<size_t>(static_cast<const char*>(last) - data) + 1;
    lines->append(held_);
    held_.clear();
    lines->append(data, whole);
    data += whole;
    size -= whole;
  }
}

FileFollower::Change FileFollower::Read(std::string* lines, size_t max_read) {
  constexpr size_t kChunk = 1 << 20;
  // One buffer for every file a thread follows (2,048 files need not hold 2 GiB).
  thread_local std::unique_ptr<char[]> buffer(new char[kChunk]);
  size_t total = 0;
  const size_t before = lines->size();
  SkipHole();
  while (total < max_read) {
    const size_t want = std::min(kChunk, max_read - total);
    const ssize_t n = stream_ ? ::read(fd_, buffer.get(), want) : ::pread(fd_, buffer.get(), want, static_cast<off_t>(offset_));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (stream_ && (errno == EAGAIN || errno == EWOULDBLOCK)) break;  // nothing more written yet
      error_ = std::strerror(errno);
      return Change::kError;
    }
    if (n == 0) break;
    if (!stream_ && offset_ < kHeadBytes && head_.size() == offset_)
      head_.append(buffer.get(), std::min(static_cast<size_t>(n), static_cast<size_t>(kHeadBytes - offset_)));
    offset_ += static_cast<std::uint64_t>(n);
    total += static_cast<size_t>(n);
    HandOut(buffer.get(), static_cast<size_t>(n), lines);
  }
  more_ = total >= max_read;
  return lines->size() > before ? Change::kAppended : Change::kNone;
}

// Whether the open file begins as the one read so far did (head_), and
// holds at least `size` bytes: a copy of it.
bool FileFollower::SameHead(std::uint64_t size) {
  struct stat st {};
  if (head_.empty() || ::fstat(fd_, &st) != 0 || static_cast<std::uint64_t>(st.st_size) < size) return false;
  std::string start(head_.size(), '\0');
  return ::pread(fd_, start.data(), start.size(), 0) == static_cast<ssize_t>(start.size()) && start == head_;
}

// After copytruncate, a writer without O_APPEND writes on at its old
// offset: the file begins with a hole, zeros that are no log text (read,
// they would make one line of megabytes, cut with the line after them).
// Reading goes on from the file's next data (SEEK_DATA; where the file
// system cannot tell, the zeros are read).
void FileFollower::SkipHole() {
  if (stream_) return;
  const off_t data = ::lseek(fd_, static_cast<off_t>(offset_), SEEK_DATA);
  if (data > static_cast<off_t>(offset_)) {
    offset_ = static_cast<std::uint64_t>(data);
    held_.clear();  // a line cut by the hole is lost with the bytes the rotation took
  }
}

void FileFollower::Release() {
  if (fd_ < 0 || stream_) return;
  Close();
  released_ = true;
}

// A file closed while idle: nothing is opened unless the path shows it grew,
// shrank or changed; a file that grew is opened again at the same offset if
// it is still the same file, else read as the new file it is.
FileFollower::Change FileFollower::PollReleased(std::string* lines, size_t max_read) {
  struct stat at_path {};
  if (::stat(path_.c_str(), &at_path) != 0) {
    if (errno != ENOENT && errno != ENOTDIR) {  // as Poll: unreadable is not gone
      error_ = std::strerror(errno);
      return Change::kError;
    }
    released_ = false;
    held_.clear();
    return Change::kGone;
  }
  const bool same = at_path.st_dev == dev_ && at_path.st_ino == ino_;
  if (same && static_cast<std::uint64_t>(at_path.st_size) == offset_) return Change::kNone;
  if (!Open()) return error_.empty() ? Change::kNone : Change::kError;
  released_ = false;
  const bool unchanged = same && dev_ == at_path.st_dev && ino_ == at_path.st_ino;
  if (unchanged ? static_cast<std::uint64_t>(at_path.st_size) < offset_ : !SameHead(offset_)) {
    StartOver();  // replaced or truncated while closed: a new file, from its start
    more_ = true;
    return Change::kRestarted;
  }
  return Read(lines, max_read);
}

FileFollower::Change FileFollower::Poll(std::string* lines, size_t max_read) {
  more_ = false;
  cut_began_ = false;
  error_.clear();
  if (released_) return PollReleased(lines, max_read);
  if (fd_ < 0) {
    const bool reopened = was_open_;
    if (!Open()) return error_.empty() ? Change::kNone : Change::kError;
    StartOver();
    if (!reopened) return Read(lines, max_read);
    more_ = true;  // back after it was gone: a new file
    return Change::kRestarted;
  }
  if (stream_) return Read(lines, max_read);  // a pipe is neither truncated nor replaced
  struct stat at_path{}, open{};
  const bool present = ::stat(path_.c_str(), &at_path) == 0;
  const int stat_error = present ? 0 : errno;
  if (::fstat(fd_, &open) != 0) {
    error_ = std::strerror(errno);
    return Change::kError;
  }
  if (static_cast<std::uint64_t>(open.st_size) < offset_) {  // truncated in place: read it anew
    StartOver();
    more_ = true;
    return Change::kRestarted;
  }
  // What the open file holds beyond what was read was written before it
  // was deleted or replaced: read that first.
  const Change change = Read(lines, max_read);
  if (change != Change::kNone || more_) return change;
  if (!present && stat_error != ENOENT && stat_error != ENOTDIR) {  // its directory made unreadable (chmod 000): not deleted
    error_ = std::strerror(stat_error);
    return Change::kError;
  }
  if (!present) {
    Close();
    held_.clear();
    return Change::kGone;
  }
  if (at_path.st_dev != dev_ || at_path.st_ino != ino_) {  // replaced: follow the new file
    Close();
    if (!Open()) return error_.empty() ? Change::kNone : Change::kError;
    if (SameHead(offset_)) return Read(lines, max_read);  // a copy of the file read so far: on where it was
    StartOver();
    more_ = true;
    return Change::kRestarted;
  }
  return Change::kNone;
}

}  // namespace jobviz
