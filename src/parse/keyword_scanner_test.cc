#include "parse/keyword_scanner.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <string>

using namespace jobviz;

namespace {

KeywordScanner::Hit NaiveFind(std::string_view text, size_t from,
                              std::initializer_list<std::string_view> keywords) {
  for (size_t i = from; i < text.size(); ++i) {
    int k = 0;
    for (std::string_view kw : keywords) {
      if (text.substr(i, kw.size()) == kw) return {i, k};
      ++k;
    }
  }
  return {KeywordScanner::npos, -1};
}

}  // namespace

TEST_CASE("Scanner finds each keyword at every offset and near the end") {
  const KeywordScanner scanner({"Profiler Info: Job", "NVTX range", "Clock Sync:"});
  const std::string keywords[] = {"Profiler Info: Job", "NVTX range", "Clock Sync:"};
  for (int k = 0; k < 3; ++k) {
    for (size_t offset = 0; offset < 70; ++offset) {
      const std::string text = std::string(offset, 'x') + keywords[k] + std::string(offset % 5, 'y');
      const auto hit = scanner.FindNext(text, 0);
      INFO("keyword " << k << " offset " << offset);
      CHECK(hit.position == offset);
      CHECK(hit.keyword == k);
    }
  }
}

TEST_CASE("Scanner ignores near misses whose first and last bytes match") {
  const KeywordScanner scanner({"Profiler Info: Job"});
  const std::string text = std::string(40, ' ') + "Profiler Info: Jxb" + "Pxxxxxxxxxxxxxxxxb" +
                           std::string(40, ' ');
  CHECK(scanner.FindNext(text, 0).position == KeywordScanner::npos);
}

TEST_CASE("Scanner agrees with a naive search on random text") {
  const KeywordScanner scanner({"ab", "Clock Sync:", "NVTX range"});
  std::mt19937 rng(42);
  const std::string alphabet = "abNVTX rangeClock Sync:\n";
  for (int round = 0; round < 200; ++round) {
    std::string text(rng() % 400, ' ');
    for (char& c : text) c = alphabet[rng() % alphabet.size()];
    size_t from = 0;
    for (;;) {
      const auto expected = NaiveFind(text, from, {"ab", "Clock Sync:", "NVTX range"});
      const auto got = scanner.FindNext(text, from);
      REQUIRE(got.position == expected.position);
      REQUIRE(got.keyword == expected.keyword);
      if (got.position == KeywordScanner::npos) break;
      from = got.position + 1;
    }
  }
}

TEST_CASE("Scanner rejects keywords it cannot handle") {
  CHECK_THROWS(KeywordScanner({"a"}));
  CHECK_NOTHROW(KeywordScanner({"aa", "bb", "cc", "dd", "ee"}));
  CHECK_THROWS(KeywordScanner({"aa", "bb", "cc", "dd", "ee", "ff"}));
}

TEST_CASE("CountNewlines counts every newline, also past 255 blocks") {
  std::mt19937 rng(7);
  for (size_t size : {0u, 1u, 15u, 16u, 17u, 255u * 16u, 255u * 16u + 1u, 10000u, 100000u}) {
    std::string text(size, 'x');
    for (char& c : text) c = rng() % 3 == 0 ? '\n' : 'x';
    CHECK(CountNewlines(text) == static_cast<size_t>(std::count(text.begin(), text.end(), '\n')));
  }
  CHECK(CountNewlines(std::string(100000, '\n')) == 100000);
}
