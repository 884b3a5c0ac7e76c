// Follows one log file as it grows (jobviz follow): hands out the whole
// lines appended since the last call. An incomplete last line waits for its
// newline: it is being written, not cut. A file cut shorter (truncated in
// place) or replaced by another one at its path (log rotation, a restarted
// job) is read on from its beginning (a hole a writer left past the
// truncation, as copytruncate leaves, skipped);
// a file replaced by a copy of itself (its first bytes the same, at least
// as long: rsync, cp) is read on where it was, as if nothing happened; a
// file deleted is said once, after what was written to it before is read. A FIFO, a socket or "-" (standard
// input) is read as it comes, without blocking.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace jobviz {

class FileFollower {
 public:
  // An incomplete line held longer than this is cut: its bytes are dropped
  // up to its newline, which is handed out alone (an empty line keeps every
  // later line's number). Memory stays bounded whatever is appended.
  static constexpr size_t kMaxHeldLine = 1 << 20;
  // Bytes read per call at most, unless the call names fewer: one file
  // catching up does not hold up the rest, and what a call reads is parsed
  // and released before the next.
  static constexpr size_t kMaxRead = 8 << 20;
  // How much of a file's start tells a copy of it from another file: its
  // first lines, their times and thread ids.
  static constexpr size_t kHeadBytes = 4096;

  enum class Change {
    kNone,       // nothing new (or the file is not there yet)
    kAppended,   // `lines` holds whole lines
    kRestarted,  // truncated, or replaced by another file (not a copy of it): read on from its start
    kGone,       // deleted (once); it is followed again if it comes back
    kError,      // it cannot be read (error() says why); tried again next call
  };

  explicit FileFollower(std::string path);
  ~FileFollower();
  FileFollower(const FileFollower&) = delete;
  FileFollower& operator=(const FileFollower&) = delete;

  // Appends to `lines` the whole lines written since the last call (up to
  // `max_read` bytes of them; more() says when some are left).
  Change Poll(std::string* lines, size_t max_read = kMaxRead);

  // Closes the file's descriptor while it is idle (a regular file only),
  // keeping where it was: the next Poll looks at the path first and opens
  // it again only when it grew, checking it is the same file (device and
  // inode). Thousands of logs are followed with a few descriptors open.
  void Release();
  bool is_open() const { return fd_ >= 0; }
  // It was read, and is not there now: deleted (kGone), and not back yet.
  bool gone() const { return was_open_ && fd_ < 0 && !released_; }

  bool more() const { return more_; }      // kMaxRead stopped the last call: call again
  bool cut_began() const { return cut_began_; }  // the last call began cutting an over-long line
  std::uint64_t bytes_dropped() const { return bytes_dropped_; }
  std::uint64_t offset() const { return offset_; }  // bytes read from the file as it is now
  size_t held() const { return held_.size(); }      // bytes of the incomplete last line
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }

 private:
  bool Open();
  void StartOver();
  void Close();
  bool SameHead(std::uint64_t size);
  void SkipHole();
  Change PollReleased(std::string* lines, size_t max_read);
  Change Read(std::string* lines, size_t max_read);
  void HandOut(const char* data, size_t size, std::string* lines);

  std::string path_;
  int fd_ = -1;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  std::uint64_t offset_ = 0;
  std::string held_;       // the incomplete last line
  std::string head_;       // the file's first kHeadBytes, to know a copy of it
  bool dropping_ = false;  // inside a line that was cut, until its newline
  bool more_ = false, cut_began_ = false;
  bool was_open_ = false;  // for kGone: it existed before
  bool stream_ = false;    // a FIFO, socket or terminal: read(2) as it comes, never restarted
  bool released_ = false;  // closed while idle (Release): dev_, ino_, offset_ and held_ still hold
  std::uint64_t bytes_dropped_ = 0;
  std::string error_;
};

}  // namespace jobviz
