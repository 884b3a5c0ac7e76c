#include "read/byte_source.h"

#include <zlib.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "read/temp_dir_test_util.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_byte_source_test {

using namespace jobviz;

namespace {

// `text` as one gzip member.
std::string Gzip(const std::string& text) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// What OpenByteSource reads from a file holding `bytes`, or its error.
std::string ReadFile(const TempDir& dir, const std::string& bytes, std::string* error) {
  const std::string path = (dir.path / "f.gz").string();
  std::ofstream(path, std::ios::binary) << bytes;
  std::unique_ptr<ByteSource> source = OpenByteSource(path, error);
  REQUIRE(source);
  std::string text;
  char buffer[4096];
  for (long n; (n = source->Read(buffer, sizeof buffer)) != 0;) {
    if (n < 0) {
      *error = source->error();
      break;
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

std::string Lines(int count, const std::string& word) {
  std::string text;
  for (int i = 0; i < count; ++i) text += word + " line " + std::to_string(i) + "\n";
  return text;
}

}  // namespace

TEST_CASE("A small gzip file is read whole, member after member, as zlib reads it") {
  TempDir dir;
  std::string error;
  const std::string a = Lines(5000, "first"), b = Lines(3000, "second");  // inflates past 4x its compressed size
  CHECK(ReadFile(dir, Gzip(a) + Gzip(b), &error) == a + b);
  CHECK(error.empty());
  CHECK(ReadFile(dir, Gzip(""), &error).empty());
  CHECK(error.empty());
}

TEST_CASE("What the whole-file inflater refuses, zlib reads and says what is wrong") {
  TempDir dir;
  std::string error;
  const std::string text = Lines(2000, "a"), gz = Gzip(text);
  SECTION("cut short") {
    ReadFile(dir, gz.substr(0, gz.size() / 2), &error);
    CHECK(error.find("ends too early") != std::string::npos);
  }
  SECTION("a corrupt checksum") {
    std::string bad = gz;
    bad[bad.size() - 6] = static_cast<char>(bad[bad.size() - 6] ^ 0x55);
    ReadFile(dir, bad, &error);
    CHECK(error.find("gzip data is corrupt") != std::string::npos);
  }
  SECTION("bytes after the last member: as before, zlib's reading") {
    const std::string read = ReadFile(dir, gz + "not gzip\n", &error);
    CHECK(read.substr(0, text.size()) == text);
  }
}

}  // namespace unit_byte_source_test
