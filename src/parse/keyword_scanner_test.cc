#include "parse/keyword_scanner.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <string>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_keyword_scanner_test {

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
  const auto simd = GENERATE(KeywordScanner::Simd::kBest, KeywordScanner::Simd::kAvx2, KeywordScanner::Simd::kAvx2Pairs, KeywordScanner::Simd::kPortable);
  const KeywordScanner scanner({"Profiler Info: Job", "NVTX range", "Clock Sync:"}, simd);
  const std::string keywords[] = {"Profiler Info: Job", "NVTX range", "Clock Sync:"};
  for (int k = 0; k < 3; ++k) {
    for (size_t offset = 0; offset < 200; ++offset) {
      const std::string text = std::string(offset, 'x') + keywords[k] + std::string(offset % 5, 'y');
      const auto hit = scanner.FindNext(text, 0);
      INFO("keyword " << k << " offset " << offset);
      CHECK(hit.position == offset);
      CHECK(hit.keyword == k);
    }
  }
}

TEST_CASE("Scanner ignores near misses whose rare bytes match") {
  const auto simd = GENERATE(KeywordScanner::Simd::kBest, KeywordScanner::Simd::kAvx2, KeywordScanner::Simd::kAvx2Pairs, KeywordScanner::Simd::kPortable);
  const KeywordScanner scanner({"Profiler Info: Job"}, simd);
  const auto [first, second] = KeywordScanner::RarestPair("Profiler Info: Job");
  std::string decoy(18, 'x');
  decoy[first] = "Profiler Info: Job"[first];
  decoy[second] = "Profiler Info: Job"[second];
  std::string text = std::string(40, ' ');
  for (int i = 0; i < 10; ++i) text += decoy + "Profiler Info: Jxb";
  text += std::string(100, ' ');
  CHECK(scanner.FindNext(text, 0).position == KeywordScanner::npos);
  text.replace(text.size() - 50, 18, "Profiler Info: Job");
  CHECK(scanner.FindNext(text, 0).position == text.size() - 50);
}

TEST_CASE("The probe bytes are the keyword's rarest, at two different offsets") {
  // 'J' and 'P' are the rarest bytes of the job keyword in log text.
  CHECK(KeywordScanner::RarestPair("Profiler Info: Job") == std::array<size_t, 2>{0, 15});
  CHECK(KeywordScanner::RarestPair("aa") == std::array<size_t, 2>{0, 1});
  const auto pair = KeywordScanner::RarestPair("Clock Sync:");
  CHECK(pair[0] < pair[1]);
}

TEST_CASE("Scanner agrees with a naive search on random text") {
  const auto simd = GENERATE(KeywordScanner::Simd::kBest, KeywordScanner::Simd::kAvx2, KeywordScanner::Simd::kAvx2Pairs, KeywordScanner::Simd::kPortable);
  const KeywordScanner scanner({"ab", "Clock Sync:", "NVTX range"}, simd);
  std::mt19937 rng(42);
  const std::string alphabet = "abNVTX rangeClock Sync:\n";
  for (int round = 0; round < 400; ++round) {
    std::string text(rng() % 600, ' ');
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

TEST_CASE("Scanner agrees with a naive search on random text with the log keywords and bytes >= 128") {
  // Five keywords of 3+ ASCII bytes: the lookup-table paths (VBMI where
  // the CPU has it, else AVX2 nibble tables) next to the others. Bytes >= 128
  // alias ASCII bytes in the VBMI tables, and share a low nibble with ASCII
  // bytes in the AVX2 ones, and must still never match.
  const auto simd = GENERATE(KeywordScanner::Simd::kBest, KeywordScanner::Simd::kAvx2, KeywordScanner::Simd::kAvx2Pairs, KeywordScanner::Simd::kPortable);
  const std::initializer_list<std::string_view> keywords = {"Profiler Info: Job", "Schedule Profiler start",
                                                            "NVTX range", "Clock Sync:", "GPU Compute Capability"};
  const KeywordScanner scanner(keywords, simd);
  std::mt19937 rng(7);
  std::string alphabet = "PSNCGrofchlVTXU \n:";
  for (char c : std::string("PSNCGrofchlVTXU")) alphabet += static_cast<char>(c | 0x80);
  for (int round = 0; round < 300; ++round) {
    std::string text(rng() % 1500, ' ');
    for (char& c : text) c = alphabet[rng() % alphabet.size()];
    // Plant whole keywords and near misses (a keyword with one byte's high bit set).
    for (int planted = 0; planted < 3 && !text.empty(); ++planted) {
      std::string word(keywords.begin()[rng() % keywords.size()]);
      if (rng() % 2) word[rng() % 3] |= static_cast<char>(0x80);
      text.insert(rng() % text.size(), word);
    }
    size_t from = 0;
    for (;;) {
      const auto expected = NaiveFind(text, from, keywords);
      const auto got = scanner.FindNext(text, from);
      REQUIRE(got.position == expected.position);
      REQUIRE(got.keyword == expected.keyword);
      // Counting the lines on the way finds the same, and counts every newline from `from` to the hit.
      std::uint64_t newlines = 1000;
      const auto counted = scanner.FindNextCountingLines(text, from, &newlines);
      REQUIRE(counted.position == expected.position);
      REQUIRE(counted.keyword == expected.keyword);
      const auto end = text.begin() + static_cast<std::ptrdiff_t>(std::min(expected.position, text.size()));
      REQUIRE(newlines == 1000 + static_cast<std::uint64_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(from), end, '\n')));
      if (got.position == KeywordScanner::npos) break;
      from = got.position + 1 + rng() % 40;  // as a parser resumes after a record
      if (from > text.size()) break;
    }
  }
}

TEST_CASE("Scanner rejects keywords it cannot handle") {
  CHECK_THROWS(KeywordScanner({"a"}));
  CHECK_NOTHROW(KeywordScanner({"aa", "bb", "cc", "dd", "ee", "ff"}));
  CHECK_THROWS(KeywordScanner({"aa", "bb", "cc", "dd", "ee", "ff", "gg", "hh"}));  // past kMaxKeywords (7)
}

TEST_CASE("CountNewlines counts every newline on every path, also past 255 blocks") {
  using Simd = KeywordScanner::Simd;
  for (Simd simd : {Simd::kBest, Simd::kAvx2, Simd::kAvx2Pairs, Simd::kPortable}) {
    std::mt19937 rng(7);
    for (size_t size : {0u, 1u, 15u, 16u, 17u, 63u, 64u, 127u, 128u, 129u, 255u * 16u, 255u * 16u + 1u, 10000u,
                        100000u}) {
      std::string text(size, 'x');
      for (char& c : text) c = rng() % 3 == 0 ? '\n' : 'x';
      // at every alignment: the vector loops load unaligned
      for (size_t skip : {0u, 1u, 7u})
        if (skip <= size) {
          const std::string_view view = std::string_view(text).substr(skip);
          CHECK(CountNewlines(view, simd) == static_cast<size_t>(std::count(view.begin(), view.end(), '\n')));
        }
    }
    CHECK(CountNewlines(std::string(100000, '\n'), simd) == 100000);
    CHECK(CountNewlines(std::string(100000, static_cast<char>(0x8a)), simd) == 0);  // '\n' with the top bit set
  }
}

TEST_CASE("CountNewlinesLast counts and finds the last newline on every path, at every length and offset") {
  std::string text;
  std::uint32_t state = 7;
  for (int i = 0; i < 300; ++i) {
    state = state * 1103515245 + 12345;
    text += (state >> 16) % 7 == 0 ? '\n' : static_cast<char>('a' + (state >> 16) % 26);
  }
  for (const auto simd : {KeywordScanner::Simd::kBest, KeywordScanner::Simd::kAvx2, KeywordScanner::Simd::kAvx2Pairs, KeywordScanner::Simd::kPortable})
    for (size_t from = 0; from < 40; ++from)
      for (size_t length = 0; from + length <= text.size(); ++length) {
        const std::string_view part = std::string_view(text).substr(from, length);
        size_t last = 0;
        const size_t count = CountNewlinesLast(part, &last, simd);
        INFO("from " << from << ", length " << length);
        REQUIRE(count == static_cast<size_t>(std::count(part.begin(), part.end(), '\n')));
        REQUIRE(last == part.rfind('\n'));
      }
}

}  // namespace unit_keyword_scanner_test
