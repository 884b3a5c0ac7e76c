#include "write/gzip_stream.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_gzip_stream_test {

using namespace jobviz;

namespace {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The whole input as one gzip member, inflated by zlib (not by what wrote
// it): fails when there are trailing bytes, a second member, or a bad CRC or
// length in the trailer.
bool InflateOneMember(const std::string& gz, std::string* out) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return false;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  char buffer[1 << 16];
  int code = Z_OK;
  while (code == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    code = inflate(&z, Z_NO_FLUSH);
    out->append(buffer, sizeof buffer - z.avail_out);
  }
  const bool whole = code == Z_STREAM_END && z.avail_in == 0;
  inflateEnd(&z);
  return whole;
}

}  // namespace

TEST_CASE("A gzip stream is one member that zlib inflates to exactly what was written, piece by piece") {
  const auto path = std::filesystem::temp_directory_path() / ("gzip_stream_test." + std::to_string(getpid()) + ".gz");
  std::string written;
  {
    auto gz = OpenGzipStream(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    REQUIRE(gz);
    std::mt19937 random(7);
    // Pieces as the trace writers hand them over: empty, one byte, a few
    // lines, and pieces larger than the compressor's 1 MiB output buffer,
    // some of them random bytes that do not compress.
    for (int i = 0; i < 40; ++i) {
      std::string piece;
      const int kind = i % 5;
      if (kind == 1) piece = "{";
      if (kind == 2) piece = ",\n{\"name\":\"forward_" + std::to_string(i) + "\",\"ts\":1697793307000199.936}";
      if (kind == 3)
        for (int k = 0; k < 40'000; ++k) piece += ",\n{\"name\":\"backward " + std::to_string(k % 32) + "\"}";
      if (kind == 4)
        for (int k = 0; k < (3 << 20); ++k) piece += static_cast<char>(random());
      CHECK(gz->Write(piece));
      written += piece;
    }
    CHECK(gz->Close());
  }
  const std::string gz = ReadFile(path);
  std::filesystem::remove(path);
  REQUIRE(gz.size() > 18);
  CHECK(gz.substr(0, 3) == "\x1f\x8b\x08");
  std::string inflated;
  CHECK(InflateOneMember(gz, &inflated));
  CHECK(inflated.size() == written.size());
  CHECK(inflated == written);
}

TEST_CASE("A gzip stream with nothing written is still a valid, empty gzip file") {
  const auto path = std::filesystem::temp_directory_path() / ("gzip_stream_empty." + std::to_string(getpid()) + ".gz");
  auto gz = OpenGzipStream(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  REQUIRE(gz);
  CHECK(gz->Close());
  std::string inflated;
  CHECK(InflateOneMember(ReadFile(path), &inflated));
  CHECK(inflated.empty());
  std::filesystem::remove(path);
}

TEST_CASE("A gzip stream into a full disk says so, in Write or at the latest in Close") {
  const int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;  // no /dev/full here
  auto gz = OpenGzipStream(fd);
  REQUIRE(gz);
  bool ok = true;
  for (int i = 0; i < 64 && ok; ++i) ok = gz->Write(std::string(1 << 16, static_cast<char>('a' + i % 26)));
  ok = gz->Close() && ok;
  CHECK_FALSE(ok);
  CHECK(gz->error().find("No space left on device") != std::string::npos);
}

}  // namespace unit_gzip_stream_test
