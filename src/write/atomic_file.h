// Writes an output file so that readers never see half of it: everything
// goes to a temporary file beside the target, which is renamed over the
// target only once it is complete. An abandoned writer removes its temp file.
// Only regular files (and new paths) are replaced so: a target that is a
// device, a FIFO or a socket (or a symlink to one), or a descriptor of this
// process (/dev/stdout, whatever it is open on: DescriptorOf), is written
// into as it is, streamed like "-". A symlink to a regular file is replaced
// by the new file, as rename(2) does, and what it pointed to is left alone.
//
// Atomic, not durable: there is no fsync, and an existing file is replaced
// by exchanging names, not by a rename that ext4 makes wait for the data
// (atomic_file.cc). Every output is derived from the logs, and a rerun
// rebuilds it after a power loss, while syncing costs every run: 0.1 s of a
// 2.6 s run on the scale benchmark (a 390 MB trace), more on slow disks.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "write/gzip_stream.h"

namespace jobviz {

// The descriptor of this process that `path` names, through any symlinks
// (/dev/stdout, /dev/fd/N, /proc/self/fd/N, /proc/<our pid>/fd/N, or a link
// of one's own to one of them); -1 when it names none. "-" is 1. Such a path
// is written through that descriptor, never renamed over: /dev/stdout is a
// link every process of the machine shares.
int DescriptorOf(const std::string& path);

class AtomicFile {
 public:
  AtomicFile() = default;
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Opens a temporary file beside `path` (making missing directories on the
  // way). "-" writes to standard output
  // directly (nothing to rename). With `gzip`, what is written is
  // compressed (also to standard output). Returns false and sets `error()` on failure.
  bool Open(const std::string& path, bool gzip = false);
  void Write(std::string_view bytes);
  // Flushes and renames into place. Returns false on any write error.
  bool Commit();
  const std::string& error() const { return error_; }

 private:
  std::string Target() const;  // the path, or "standard output"
  bool CloseGzip();
  std::string path_, temp_path_, error_;
  std::FILE* file_ = nullptr;
  std::unique_ptr<GzipStream> gzip_;  // writing into a duplicate of file_'s descriptor
  bool to_stdout_ = false;
  bool streamed_ = false;  // written into the target itself (not a regular file): nothing to rename
  bool write_failed_ = false;
};

}  // namespace jobviz
