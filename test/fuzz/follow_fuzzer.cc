// Fuzz target: a log file as `jobviz follow` sees it change. The input is a
// script of what happens to the file between polls: bytes appended (from
// the input itself, so job lines in the corpus make real records), a
// truncation (copytruncate), a copy renamed over it (rsync) with or without
// more bytes, a deletion, a write past the end (a hole), the descriptor
// released while idle. After each step the log is polled with a small read
// budget; at the end it is read to its end. No crash, no sanitizer report,
// and the records always hold what a log can: lines in order and inside the
// lines counted, and never more than were read.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz_pipeline.h"
#include "parse/followed_log.h"
#include "parse/line_parser.h"

namespace {

namespace fs = std::filesystem;

// One directory for the whole fuzzing process, one file name per input.
const fs::path& Scratch() {
  static const fs::path dir = [] {
    std::string pattern = (fs::temp_directory_path() / "jobviz_follow_fuzz_XXXXXX").string();
    const char* made = ::mkdtemp(pattern.data());
    jobviz::fuzz::Require(made != nullptr, "a scratch directory");
    std::atexit([] { std::error_code ec; fs::remove_all(Scratch(), ec); });
    return fs::path(pattern);
  }();
  return dir;
}

void Write(const fs::path& path, const std::string& text, std::ios::openmode mode) {
  std::ofstream(path, std::ios::binary | mode) << text;
}

void CheckRecords(const jobviz::FollowedLog& log) {
  std::uint64_t last = 0;
  for (const jobviz::LogRecord& r : log.scan().records) {
    jobviz::fuzz::Require(r.line >= 1 && r.line <= log.scan().lines, "a record's line is among the lines counted");
    jobviz::fuzz::Require(r.line >= last, "records in line order");
    last = r.line;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  using namespace jobviz;
  static const LineParser parser;
  const fs::path path = Scratch() / "workerlog.0", copy = Scratch() / "copy";
  std::error_code ec;
  fs::remove(path, ec);
  FollowedLog log(path.string(), "workerlog.0");
  size_t at = 0;
  const auto next = [&]() -> std::uint8_t { return at < size ? data[at++] : 0; };
  const auto bytes = [&](size_t n) {
    n = std::min(n, size - at);
    std::string text(reinterpret_cast<const char*>(data) + at, n);
    at += n;
    return text;
  };
  for (int step = 0; at < size && step < 256; ++step) {
    switch (next() % 8) {
      case 0:
      case 1:
        Write(path, bytes(1 + next() * 4), std::ios::app);
        break;
      case 2:  // copytruncate
        if (fs::exists(path, ec)) fs::resize_file(path, std::min<std::uintmax_t>(next() * 8u, fs::file_size(path, ec)), ec);
        break;
      case 3:  // a copy renamed over it, perhaps with more bytes
        if (fs::copy_file(path, copy, fs::copy_options::overwrite_existing, ec)) {
          Write(copy, bytes(next() % 64), std::ios::app);
          fs::rename(copy, path, ec);
        }
        break;
      case 4:
        fs::remove(path, ec);
        break;
      case 5: {  // a writer without O_APPEND, past the end: a hole
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0644);
        if (fd >= 0) {
          const std::string text = bytes(1 + next() % 128);
          [[maybe_unused]] const ssize_t n = ::pwrite(fd, text.data(), text.size(), static_cast<off_t>(next()) * 4096);
          ::close(fd);
        }
        break;
      }
      case 6:
        log.Release();
        break;
      default:
        break;
    }
    log.Poll(parser, 1 + next() * 64);
    CheckRecords(log);
  }
  for (int i = 0; i < 1024 && log.Poll(parser, 1 << 16).more; ++i) {
  }
  CheckRecords(log);
  fs::remove(path, ec);
  return 0;
}
