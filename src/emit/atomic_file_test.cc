#include "emit/atomic_file.h"

#include "read/temp_dir_test_util.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

using namespace jobviz;
namespace fs = std::filesystem;

namespace {

std::string Contents(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool Write(const fs::path& path, std::string_view text, std::string* error = nullptr) {
  AtomicFile file;
  if (!file.Open(path.string())) return false;
  file.Write(text);
  const bool ok = file.Commit();
  if (error) *error = file.error();
  return ok;
}

size_t Entries(const fs::path& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

}  // namespace

TEST_CASE("A new file appears whole and no temporary file stays") {
  TempDir dir;
  REQUIRE(Write(dir.path / "t.json", "new"));
  CHECK(Contents(dir.path / "t.json") == "new");
  CHECK(Entries(dir.path) == 1);
}

TEST_CASE("An existing file is replaced and the old one removed") {
  TempDir dir;
  REQUIRE(Write(dir.path / "t.json", std::string(100000, 'o')));
  REQUIRE(Write(dir.path / "t.json", "new"));
  CHECK(Contents(dir.path / "t.json") == "new");
  CHECK(Entries(dir.path) == 1);  // the old file, exchanged out, is gone too
}

TEST_CASE("A symlink target is replaced like rename does, leaving what it pointed to") {
  TempDir dir;
  REQUIRE(Write(dir.path / "real", "kept"));
  fs::create_symlink(dir.path / "real", dir.path / "link");
  REQUIRE(Write(dir.path / "link", "new"));
  CHECK_FALSE(fs::is_symlink(dir.path / "link"));
  CHECK(Contents(dir.path / "link") == "new");
  CHECK(Contents(dir.path / "real") == "kept");
  CHECK(Entries(dir.path) == 2);
}

TEST_CASE("A directory in the way is left alone and the write fails") {
  TempDir dir;
  fs::create_directories(dir.path / "t.json" / "inside");
  std::string error;
  CHECK_FALSE(Write(dir.path / "t.json", "new", &error));
  CHECK(error.find("t.json") != std::string::npos);
  CHECK(fs::is_directory(dir.path / "t.json" / "inside"));
  CHECK(Entries(dir.path) == 1);  // no temporary file either
}

namespace {

// Reads a FIFO on another thread while `write` writes into it.
std::string ThroughFifo(const fs::path& fifo, const std::function<bool()>& write) {
  std::string received;
  std::thread reader([&] { received = Contents(fifo); });
  CHECK(write());
  reader.join();
  return received;
}

}  // namespace

TEST_CASE("A FIFO, or a symlink to one (/dev/stdout), is written into, not replaced") {
  TempDir dir;
  const fs::path fifo = dir.path / "pipe";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(ThroughFifo(fifo, [&] { return Write(fifo, "streamed"); }) == "streamed");
  CHECK(fs::is_fifo(fifo));
  fs::create_symlink(fifo, dir.path / "stdout_like");
  CHECK(ThroughFifo(fifo, [&] { return Write(dir.path / "stdout_like", "through the link"); }) == "through the link");
  CHECK(fs::is_symlink(dir.path / "stdout_like"));
  CHECK(fs::is_fifo(fifo));
  CHECK(Entries(dir.path) == 2);  // no temporary file
  // gzip too: the compressed bytes go into the FIFO.
  const std::string gzipped = ThroughFifo(fifo, [&] {
    AtomicFile file;
    if (!file.Open(fifo.string(), /*gzip=*/true)) return false;
    file.Write("x");
    return file.Commit();
  });
  CHECK(gzipped.substr(0, 2) == "\x1f\x8b");
}

TEST_CASE("A character device stays a device (a null device node of its own, as root)") {
  TempDir dir;
  const fs::path node = dir.path / "null";
  if (mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    WARN("cannot make a device node here (not root): skipped");
    return;
  }
  REQUIRE(Write(node, "into the device"));
  CHECK(fs::is_character_file(node));
  CHECK(Entries(dir.path) == 1);
}
