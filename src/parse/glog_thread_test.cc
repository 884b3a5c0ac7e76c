#include "parse/glog_thread.h"

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_glog_thread_test {

using namespace jobviz;

// glog pads the thread id to five columns; an id of up to seven digits
// after glog's own spacing is read as one word, anything else byte by
// byte: both give the same id.
TEST_CASE("The glog thread id, whatever its width and spacing; 0 where there is none") {
  const std::vector<std::pair<std::string, std::uint32_t>> cases = {
      {"I1020 09:15:07.265326 22317 x.cc:1] text", 22317},
      {"I1020 09:15:07.265326   513 x.cc:1] text", 513},
      {"I1020 09:15:07.265326 7 x.cc:1] text", 7},
      {"I1020 09:15:07.265326 1234567 x.cc:1] text", 1234567},
      {"I1020 09:15:07.265326 12345678 x.cc:1] text", 12345678},
      {"I1020 09:15:07.265326 4294967295 x.cc:1] text", 4294967295u},
      {"I1020 09:15:07.265326 4294967296 x.cc:1] text", 0},  // past 32 bits
      {"I1020 09:15:07.265326 22317x x.cc:1] text", 0},
      {"I1020 09:15:07.2653 22317 x.cc:1] text", 22317},
      {"W1020 09:15:07.265326789 22317 x.cc:1] text", 22317},
      {"E1020 09:15:07.265326 42 x", 42},
      {"F1020 09:15:07.265326 42 x.cc:1] text", 42},
      {"X1020 09:15:07.265326 42 x.cc:1] text", 0},  // not a glog level
      {"I10a0 09:15:07.265326 42 x.cc:1] text", 0},
      {"I1020 09:15:07.265326 42", 0},               // no space after the id
      {"[2024-04-30 17:28:28,401] [    INFO] topology.py:288 - text", 0},
      {"I1020 09:15", 0},
      {"", 0},
  };
  for (const auto& [line, thread] : cases) {
    INFO(line);
    CHECK(GlogThread(line) == thread);
  }
}

}  // namespace unit_glog_thread_test
