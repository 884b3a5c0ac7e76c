// Finds where any of a few keywords occur in a large block of text, in one
// pass. Almost every byte of a worker log is noise; this is the loop that
// touches all of them. Checked once at run time, the fastest path the CPU has:
// - AVX-512 VBMI: the first kFingerprint bytes at each of 64 starts are
//   looked up in 128-entry tables of which keywords have that byte there
//   (Teddy, as in ripgrep's aho-corasick); all keywords in three lookups,
//   and the newlines counted in the same pass.
// - AVX2: the same lookups split into a byte's low and high nibble (two
//   16-entry tables each, vpshufb), the newlines counted in the same pass;
//   where a keyword does not fit the tables (shorter than kFingerprint, or
//   not ASCII there), for each keyword the two bytes least likely in log
//   text (by a fixed frequency ranking, as ripgrep's memchr does) compared
//   at their offsets for 64 starts at a time.
// - elsewhere the same 16 starts at a time with GCC/Clang vector extensions.
// Only candidates are compared with the whole keywords.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace jobviz {

class KeywordScanner {
 public:
  static constexpr size_t kMaxKeywords = 7;
  static constexpr size_t kFingerprint = 3;  // leading bytes looked up by the VBMI path
  struct Hit {
    size_t position;  // npos when there is none
    int keyword;      // index into the keywords given to the constructor
  };
  static constexpr size_t npos = std::string_view::npos;
  // kAvx2 and kPortable: tests of the paths a CPU without AVX-512 VBMI (or
  // AVX2) takes; kAvx2Pairs: of the AVX2 path for keywords that do not fit
  // the tables.
  enum class Simd { kBest, kAvx2, kAvx2Pairs, kPortable };

  // Each keyword is at least 2 bytes long; at most kMaxKeywords of them.
  // The views must outlive the scanner.
  explicit KeywordScanner(std::initializer_list<std::string_view> keywords, Simd simd = Simd::kBest);

  // The first occurrence of any keyword starting at or after `from`.
  Hit FindNext(std::string_view text, size_t from) const;
  // The same, and adds to *newlines the number of '\n' from `from` to the
  // hit (to the end of `text` when there is none): line numbers without a
  // second pass over the text where the VBMI path counts as it scans.
  // With `last_newline`, also where the last '\n' of those it counted
  // itself lies (npos when none: the VBMI pass counts some as it scans, so
  // look before the hit with memrchr then).
  Hit FindNextCountingLines(std::string_view text, size_t from, std::uint64_t* newlines,
                            size_t* last_newline = nullptr) const;

  // The two offsets of `keyword` whose bytes are rarest in log text.
  static std::array<size_t, 2> RarestPair(std::string_view keyword);

  struct Probe {
    std::string_view keyword;
    std::uint32_t offset1, offset2;  // offset1 < offset2
  };
  // A bit per keyword for each nibble value at each of the first kFingerprint offsets.
  struct NibbleTables {
    std::uint8_t low[kFingerprint][16]{}, high[kFingerprint][16]{};
  };

 private:
  int MatchAt(std::string_view text, size_t position) const;
  // FindNext; the VBMI path also adds the newlines in [from, *counted_to) to
  // *newlines (the others leave *counted_to at `from`).
  Hit Find(std::string_view text, size_t from, std::uint64_t* newlines, size_t* counted_to) const;

  std::array<Probe, kMaxKeywords> probes_{};
  size_t count_ = 0;
  size_t reach_ = 0;  // largest offset2: a candidate at i reads up to i + reach_
  bool avx2_ = false;
  bool vbmi_ = false;
  bool teddy_ = false;  // AVX2 nibble tables
  std::array<std::uint8_t[128], kFingerprint> tables_{};  // byte -> keywords with it at offset j
  NibbleTables nibbles_;
};

// Number of '\n' bytes in `text`: with AVX-512 BW 128 bytes a step, else as
// the scanner (`simd` as there: kAvx2 and kPortable for tests).
size_t CountNewlines(std::string_view text, KeywordScanner::Simd simd = KeywordScanner::Simd::kBest);
// The same, and where the last '\n' is (npos when none).
size_t CountNewlinesLast(std::string_view text, size_t* last, KeywordScanner::Simd simd = KeywordScanner::Simd::kBest);

}  // namespace jobviz
