#include "read/line_reader.h"

#include <catch2/catch.hpp>
#include <string>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_line_reader_test {

using namespace jobviz;

namespace {

struct Collected {
  std::string text;
  std::vector<LineBlock> blocks;
  std::vector<std::string> copies;
};

Collected ReadAll(const std::string& input, size_t block, size_t max_line = LineReader::kMaxLine) {
  auto source = StringByteSource(input);
  LineReader reader(*source, block, max_line);
  Collected c;
  LineBlock b;
  while (reader.Next(&b)) {
    c.text += b.text;
    c.copies.emplace_back(b.text);
    c.blocks.push_back(b);
  }
  return c;
}

}  // namespace

TEST_CASE("Blocks end on line boundaries and add up to the input") {
  std::string input;
  for (int i = 0; i < 1000; ++i) input += "line " + std::to_string(i) + " " + std::string(i % 37, 'z') + "\n";
  const Collected c = ReadAll(input, 64);
  CHECK(c.text == input);
  for (size_t i = 0; i < c.copies.size(); ++i) {
    CHECK(c.copies[i].back() == '\n');
    CHECK_FALSE(c.blocks[i].ends_without_newline);
  }
}

TEST_CASE("A last line without newline comes last and is marked") {
  const Collected c = ReadAll("one\ntwo\nthr", 8);
  CHECK(c.text == "one\ntwo\nthr");
  REQUIRE_FALSE(c.blocks.empty());
  CHECK(c.blocks.back().ends_without_newline);
  CHECK(c.copies.back().substr(c.copies.back().size() - 3) == "thr");
}

TEST_CASE("A line longer than the block grows the buffer") {
  const std::string input = "short\n" + std::string(1000, 'L') + "\nend\n";
  const Collected c = ReadAll(input, 16);
  CHECK(c.text == input);
  for (const LineBlock& b : c.blocks) CHECK_FALSE(b.cut_line);
}

TEST_CASE("A line longer than the limit is handed over in pieces") {
  const std::string input = std::string(100, 'L') + "\nend\n";
  const Collected c = ReadAll(input, 16, 32);
  CHECK(c.text == input);
  REQUIRE_FALSE(c.blocks.empty());
  CHECK(c.blocks.front().cut_line);
}

TEST_CASE("Empty input has no blocks") { CHECK(ReadAll("", 16).blocks.empty()); }

TEST_CASE("Readers that share one buffer, one after another, each read only their own input") {
  ReadBuffer shared;
  // The first grows the buffer for a long line; the next ones, shorter and
  // with no line past the block, must see none of the bytes left behind.
  const std::vector<std::string> inputs = {"a\n" + std::string(300, 'L') + "\nz\n", "one\ntwo\n", "x", "", "tail\nno newline"};
  for (const std::string& input : inputs) {
    auto source = StringByteSource(input);
    LineReader reader(*source, 16, LineReader::kMaxLine, &shared);
    std::string text;
    LineBlock b;
    bool last_without_newline = false;
    while (reader.Next(&b)) {
      text += b.text;
      last_without_newline = b.ends_without_newline;
    }
    CHECK(text == input);
    CHECK(last_without_newline == (!input.empty() && input.back() != '\n'));
  }
  CHECK(shared.size >= 301);  // grown once, kept
}

}  // namespace unit_line_reader_test
