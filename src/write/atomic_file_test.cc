#include "write/atomic_file.h"

#include "read/temp_dir_test_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/sysmacros.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_atomic_file_test {

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

TEST_CASE("A path to one of this process's descriptors is written through it, never renamed over") {
  TempDir dir;
  // A regular file open on a descriptor of ours, as `> out` opens stdout.
  const fs::path out = dir.path / "out";
  const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  const std::string by_proc = "/proc/self/fd/" + std::to_string(fd);
  CHECK(DescriptorOf(by_proc) == fd);
  CHECK(DescriptorOf("/dev/fd/" + std::to_string(fd)) == fd);
  CHECK(DescriptorOf("-") == 1);
  CHECK(DescriptorOf("/dev/stdout") == 1);
  CHECK(DescriptorOf(out.string()) == -1);  // the file itself is a file, not a descriptor
  CHECK(DescriptorOf("/dev/fd/999999") == -1);  // not open
  // A link of one's own, through a link to /proc/self/fd/N.
  fs::create_symlink(by_proc, dir.path / "mine");
  fs::create_symlink(dir.path / "mine", dir.path / "mine2");
  CHECK(DescriptorOf((dir.path / "mine2").string()) == fd);
  REQUIRE(Write(dir.path / "mine2", "through the link\n"));
  REQUIRE(Write(by_proc, "and by its name\n"));
  ::close(fd);
  // Both went into the file the descriptor is open on, one after the other,
  // and the links are still links: nothing was renamed over them.
  CHECK(Contents(out) == "through the link\nand by its name\n");
  CHECK(fs::is_symlink(dir.path / "mine"));
  CHECK(fs::is_symlink(dir.path / "mine2"));
}

}  // namespace unit_atomic_file_test
