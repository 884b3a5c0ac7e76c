#include "read/file_follower.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "read/temp_dir_test_util.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_file_follower_test {

using namespace jobviz;
namespace fs = std::filesystem;

namespace {

void Append(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::app) << text; }

std::string PollText(FileFollower& follower, FileFollower::Change expected) {
  std::string lines;
  CHECK(follower.Poll(&lines) == expected);
  return lines;
}

}  // namespace

TEST_CASE("A file not there yet is nothing new; once written, its whole lines come out") {
  TempDir dir;
  const fs::path log = dir.path / "workerlog.0";
  FileFollower follower(log.string());
  CHECK(PollText(follower, FileFollower::Change::kNone).empty());
  Append(log, "one\ntwo\n");
  CHECK(PollText(follower, FileFollower::Change::kAppended) == "one\ntwo\n");
  CHECK(PollText(follower, FileFollower::Change::kNone).empty());
  CHECK(follower.offset() == 8);
}

TEST_CASE("An incomplete last line waits for its newline") {
  TempDir dir;
  const fs::path log = dir.path / "workerlog.0";
  Append(log, "first\nsec");
  FileFollower follower(log.string());
  CHECK(PollText(follower, FileFollower::Change::kAppended) == "first\n");
  CHECK(follower.held() == 3);
  Append(log, "ond, still");
  CHECK(PollText(follower, FileFollower::Change::kNone).empty());
  Append(log, " going\nthird\n");
  CHECK(PollText(follower, FileFollower::Change::kAppended) == "second, still going\nthird\n");
  CHECK(follower.held() == 0);
}

TEST_CASE("A file truncated in place starts over from its beginning") {
  TempDir dir;
  const fs::path log = dir.path / "workerlog.0";
  Append(log, "old run line 1\nold run line 2\n");
  FileFollower follower(log.string());
  PollText(follower, FileFollower::Change::kAppended);
  std::ofstream(log, std::ios::trunc) << "new\n";
  CHECK(PollText(follower, FileFollower::Change::kRestarted).empty());
  CHECK(follower.more());
  CHECK(PollText(follower, FileFollower::Change::kAppended) == "new\n");
}

TEST_CASE("A file replaced at its path: the old one is read to its end, then the new one from its start") {
  TempDir dir;
  const fs::path log = dir.path / "workerlog.0";
  Append(log, "a\n");
  FileFollower follower(log.string());
  PollText(follower, FileFollower::Change::kAppended);
  Append(log, "b\n");  // written before the rotation
  fs::rename(log, dir.path / "workerlog.0.1");
  Append(log, "fresh\n");
  CHECK(PollText(follower, FileFollower::Change::kAppended) == "b\n");
  CHECK(PollText(follower, FileFollower::Change::kRestarted).empty());
  CHECK(PollText(follower, FileFollower::Change::kAppended) == "fresh\n");
}

TEST_CASE("A deleted file is said once; back again, it is a new file") {
  TempDir dir;
  const fs::path log = dir.path / "workerlog.0";
  Append(log, "a\n");
  FileFollower follower(log.string());
  PollText(follower, FileFollower::Change::kAppended);
  CHECK_FALSE(follower.gone());
  fs::remove(log);
  CHECK(PollText(follower, FileFollower::Change::kGone).empty());
  CHECK(follower.gone());
  CHECK(PollText(follower, FileFollower::Change::kNone).empty());
  CHECK(follower.gone());
  Append(log, "again\n");
  CHECK(PollText(follower, FileFollower::Change::kRestarted).empty());
  CHECK_FALSE(follower.gone());
  CHECK(PollText(follower, FileFollower::Change::kAppended) == "again\n");
}

TEST_CASE("A line with no newline beyond the limit is dropped to its newline; memory stays bounded") {
  TempDir dir;
  const fs::path log = dir.path / "workerlog.0";
  FileFollower follower(log.string());
  Append(log, "before\n");
  PollText(follower, FileFollower::Change::kAppended);
  const std::string garbage(FileFollower::kMaxHeldLine / 2 + 1, '\x7f');
  Append(log, garbage);
  CHECK(PollText(follower, FileFollower::Change::kNone).empty());
  CHECK_FALSE(follower.cut_began());
  Append(log, garbage);
  PollText(follower, FileFollower::Change::kNone);
  CHECK(follower.cut_began());
  CHECK(follower.held() == 0);
  for (int i = 0; i < 20; ++i) {  // 10 MiB more, still no newline
    Append(log, garbage);
    PollText(follower, FileFollower::Change::kNone);
    CHECK(follower.held() == 0);
  }
  Append(log, "tail of it\nafter\n");
  // The cut line's newline alone keeps the next line's number.
  CHECK(PollText(follower, FileFollower::Change::kAppended) == "\nafter\n");
  CHECK(follower.bytes_dropped() == 22 * garbage.size() + 10);
}

TEST_CASE("A file larger than one call's read comes in several calls, in order") {
  TempDir dir;
  const fs::path log = dir.path / "workerlog.0";
  const std::string line(99, 'x');
  {
    std::ofstream out(log);
    for (size_t i = 0; i < (FileFollower::kMaxRead / 100) * 2 + 7; ++i) out << line << '\n';
  }
  FileFollower follower(log.string());
  std::string all;
  int calls = 0;
  do {
    REQUIRE(follower.Poll(&all) == FileFollower::Change::kAppended);
    ++calls;
  } while (follower.more());
  CHECK(calls >= 2);
  CHECK(all.size() == fs::file_size(log));
  CHECK(all.find_first_not_of("x\n") == std::string::npos);
}

TEST_CASE("A FIFO is read as it comes, without blocking, with or without a writer") {
  TempDir dir;
  const fs::path fifo = dir.path / "events";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  FileFollower follower(fifo.string());
  CHECK(PollText(follower, FileFollower::Change::kNone).empty());  // no writer yet: no block
  const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
  REQUIRE(writer >= 0);
  REQUIRE(::write(writer, "one\ntw", 6) == 6);
  CHECK(PollText(follower, FileFollower::Change::kAppended) == "one\n");
  REQUIRE(::write(writer, "o\n", 2) == 2);
  CHECK(PollText(follower, FileFollower::Change::kAppended) == "two\n");
  ::close(writer);
  CHECK(PollText(follower, FileFollower::Change::kNone).empty());
}

TEST_CASE("A directory is no log to follow") {
  TempDir dir;
  fs::create_directories(dir.path / "workerlog.0");
  FileFollower follower((dir.path / "workerlog.0").string());
  std::string lines;
  CHECK(follower.Poll(&lines) == FileFollower::Change::kError);
  CHECK(follower.error() == "not a regular file");
}

TEST_CASE("A released file holds no descriptor and goes on where it was") {
  TempDir dir;
  const fs::path log = dir.path / "workerlog.0";
  FileFollower follower(log.string());
  Append(log, "one\ntw");
  CHECK(PollText(follower, FileFollower::Change::kAppended) == "one\n");
  follower.Release();
  CHECK_FALSE(follower.is_open());
  CHECK(PollText(follower, FileFollower::Change::kNone).empty());
  CHECK_FALSE(follower.is_open());  // nothing grew: not opened to find out
  Append(log, "o\nthree\n");
  CHECK(PollText(follower, FileFollower::Change::kAppended) == "two\nthree\n");  // the held half kept
  CHECK(follower.is_open());
  follower.Release();
  // Replaced while closed (rename over it), then truncated: each read anew from its start.
  Append(dir.path / "new", "fresh\n");
  fs::rename(dir.path / "new", log);
  CHECK(PollText(follower, FileFollower::Change::kRestarted).empty());
  CHECK(PollText(follower, FileFollower::Change::kAppended) == "fresh\n");
  follower.Release();
  fs::resize_file(log, 0);
  Append(log, "x\n");
  CHECK(PollText(follower, FileFollower::Change::kRestarted).empty());
  CHECK(PollText(follower, FileFollower::Change::kAppended) == "x\n");
  follower.Release();
  CHECK_FALSE(follower.gone());  // closed while idle, still there
  fs::remove(log);
  CHECK(PollText(follower, FileFollower::Change::kGone).empty());
  CHECK(follower.gone());
  Append(log, "back\n");
  CHECK(PollText(follower, FileFollower::Change::kRestarted).empty());
  CHECK(PollText(follower, FileFollower::Change::kAppended) == "back\n");
}

TEST_CASE("A copy renamed over the file reads on where it was; a hole after a truncation is skipped") {
  TempDir dir;
  const fs::path log = dir.path / "workerlog.0";
  FileFollower follower(log.string());
  Append(log, "one\ntwo\n");
  CHECK(PollText(follower, FileFollower::Change::kAppended) == "one\ntwo\n");
  fs::copy_file(log, dir.path / "copy");  // rsync: the same bytes, a new file renamed over it
  Append(dir.path / "copy", "three\n");
  fs::rename(dir.path / "copy", log);
  CHECK(PollText(follower, FileFollower::Change::kAppended) == "three\n");
  // copytruncate, the writer without O_APPEND: it writes on at its old offset.
  fs::resize_file(log, 0);
  CHECK(PollText(follower, FileFollower::Change::kRestarted).empty());
  const int fd = ::open(log.c_str(), O_WRONLY);
  REQUIRE(fd >= 0);
  CHECK(::pwrite(fd, "four\n", 5, 1 << 20) == 5);
  ::close(fd);
  CHECK(PollText(follower, FileFollower::Change::kAppended) == "four\n");  // no megabyte of zeros
}

}  // namespace unit_file_follower_test
