// The keyword scanner's SIMD paths (parse/keyword_scanner.h): candidate
// finders for AVX2 (Teddy's nibble tables) and AVX-512 VBMI, their
// verification against the keywords, newline counting, and the CPU checks
// that pick them at run time. Included by keyword_scanner.cc alone, into
// its own unit, so that the kernels inline into the scan loop as before.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <utility>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define JOBVIZ_HAVE_AVX2_PATH 1
#endif

#include "parse/digit_chunks.h"
#include "parse/keyword_scanner.h"

namespace jobviz {

namespace {

using Probe = KeywordScanner::Probe;

int MatchProbes(const Probe* probes, size_t count, const char* data, size_t n, size_t position) {
  for (size_t k = 0; k < count; ++k) {
    const std::string_view kw = probes[k].keyword;
    if (n - position >= kw.size() && SameBytes(data + position, kw.data(), kw.size()))  // inline: one a job line
      return static_cast<int>(k);
  }
  return -1;
}

#ifdef JOBVIZ_HAVE_AVX2_PATH

__attribute__((target("avx2"))) inline __m256i Load32(const char* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// 64 candidate starts per round: for each keyword, two compares of each
// 32-byte half at the keyword's two rare-byte offsets, or'ed over the
// keywords before one mask move per half. `kCount` is a template argument
// so that the keyword loop unrolls and the probe bytes and offsets stay in
// registers. Returns the first round at or after `i` with a candidate (its
// mask in *candidates, 0 when none is left). Kept apart from the
// verification, which calls memcmp: a call in the loop would clobber the
// vector registers and send them through the stack every round.
template <size_t kCount>
__attribute__((target("avx2"), noinline)) size_t NextAvx2Candidates(const Probe* probes, size_t reach,
                                                                    const char* data, size_t n, size_t i,
                                                                    std::uint64_t* candidates) {
  __m256i byte1[kCount], byte2[kCount];
  size_t offset1[kCount], offset2[kCount];
  for (size_t k = 0; k < kCount; ++k) {
    byte1[k] = _mm256_set1_epi8(probes[k].keyword[probes[k].offset1]);
    byte2[k] = _mm256_set1_epi8(probes[k].keyword[probes[k].offset2]);
    offset1[k] = probes[k].offset1;
    offset2[k] = probes[k].offset2;
  }
  for (; i + 64 + reach <= n; i += 64) {
    __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (size_t k = 0; k < kCount; ++k) {
      const char* p1 = data + i + offset1[k];
      const char* p2 = data + i + offset2[k];
      lo = _mm256_or_si256(lo, _mm256_and_si256(_mm256_cmpeq_epi8(Load32(p1), byte1[k]),
                                                _mm256_cmpeq_epi8(Load32(p2), byte2[k])));
      hi = _mm256_or_si256(hi, _mm256_and_si256(_mm256_cmpeq_epi8(Load32(p1 + 32), byte1[k]),
                                                _mm256_cmpeq_epi8(Load32(p2 + 32), byte2[k])));
    }
    const std::uint64_t found =
        static_cast<std::uint32_t>(_mm256_movemask_epi8(lo)) |
        static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm256_movemask_epi8(hi))) << 32;
    if (found != 0) {
      *candidates = found;
      return i;
    }
  }
  *candidates = 0;
  return i;
}

// Verifies the candidates of each round NextCandidates finds; returns the
// first hit, or npos with *stopped set where the caller must go on. Before
// leaving a round, `passed(bytes)` is told how many of its 64 bytes lie
// before the hit (all 64 when it had none), for the VBMI pass's line count.
template <typename NextCandidates, typename Passed>
KeywordScanner::Hit VerifyCandidates(const Probe* probes, size_t count, const char* data, size_t n, size_t i,
                                     size_t* stopped, const NextCandidates& next_candidates, const Passed& passed) {
  for (;;) {
    std::uint64_t candidates = 0;
    i = next_candidates(i, &candidates);
    if (candidates == 0) break;
    do {
      const int offset = std::countr_zero(candidates);
      const int k = MatchProbes(probes, count, data, n, i + static_cast<size_t>(offset));
      if (k >= 0) {
        passed(offset);
        return {i + static_cast<size_t>(offset), k};
      }
      candidates &= candidates - 1;
    } while (candidates != 0);
    passed(64);
    i += 64;
  }
  *stopped = i;
  return {KeywordScanner::npos, -1};
}

template <size_t kCount>
KeywordScanner::Hit FindAvx2(const Probe* probes, size_t reach, const char* data, size_t n, size_t i,
                             size_t* stopped) {
  return VerifyCandidates(
      probes, kCount, data, n, i, stopped,
      [&](size_t from, std::uint64_t* candidates) {
        return NextAvx2Candidates<kCount>(probes, reach, data, n, from, candidates);
      },
      [](int) {});
}

// With AVX-512 VBMI, all keywords at once: the byte at each of the first
// kFingerprint offsets of a candidate start is looked up in a 128-entry
// table (one vpermi2b) that says which keywords have that byte there; a
// start whose lookups share a keyword is a candidate (Teddy, as in
// ripgrep's aho-corasick). Three loads and three lookups per 64 starts
// instead of two loads and compares per keyword. Bytes >= 128 alias
// bytes < 128 in the tables; the verification sorts them out. The same
// pass counts the newlines of the blocks it leaves behind into *newlines,
// and hands back those of the block it stops at in *block_newlines (a bit
// per byte), so that line numbers cost no second pass over the text.
// Returns like NextAvx2Candidates, and is kept apart from the verification
// for the same reason.
__attribute__((target("avx512f,avx512bw,avx512vbmi,popcnt"), noinline)) size_t NextVbmiCandidates(
    const std::uint8_t (*tables)[128], const char* data, size_t n, size_t i, std::uint64_t* candidates,
    std::uint64_t* block_newlines, std::uint64_t* newlines) {
  static_assert(KeywordScanner::kFingerprint == 3);
  const __m512i low0 = _mm512_loadu_si512(tables[0]), high0 = _mm512_loadu_si512(tables[0] + 64);
  const __m512i low1 = _mm512_loadu_si512(tables[1]), high1 = _mm512_loadu_si512(tables[1] + 64);
  const __m512i low2 = _mm512_loadu_si512(tables[2]), high2 = _mm512_loadu_si512(tables[2] + 64);
  const __m512i newline = _mm512_set1_epi8('\n');
  std::uint64_t lines = 0;
  for (; i + 64 + KeywordScanner::kFingerprint - 1 <= n; i += 64) {
    const char* p = data + i;
    const __m512i bytes = _mm512_loadu_si512(p);
    const __m512i at0 = _mm512_permutex2var_epi8(low0, bytes, high0);
    const __m512i at1 = _mm512_permutex2var_epi8(low1, _mm512_loadu_si512(p + 1), high1);
    const __m512i at2 = _mm512_permutex2var_epi8(low2, _mm512_loadu_si512(p + 2), high2);
    const std::uint64_t found = _mm512_test_epi8_mask(_mm512_and_si512(at0, at1), at2);
    const std::uint64_t ends = _mm512_cmpeq_epi8_mask(bytes, newline);
    if (found != 0) {
      *candidates = found;
      *block_newlines = ends;
      *newlines += lines;
      return i;
    }
    lines += static_cast<std::uint64_t>(std::popcount(ends));
  }
  *candidates = 0;
  *newlines += lines;
  return i;
}

// A pass that counts newlines as it finds candidates (VBMI, AVX2 nibble
// tables): adds the newlines before the hit (or before *stopped) to *newlines.
template <typename NextCountingCandidates>
KeywordScanner::Hit FindCounting(const Probe* probes, size_t count, const char* data, size_t n, size_t i,
                                 size_t* stopped, std::uint64_t* newlines, const NextCountingCandidates& next) {
  std::uint64_t block_newlines = 0;  // of the round being verified
  return VerifyCandidates(
      probes, count, data, n, i, stopped,
      [&](size_t from, std::uint64_t* candidates) { return next(from, candidates, &block_newlines, newlines); },
      [&](int bytes) {
        const std::uint64_t before = bytes == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bytes) - 1;
        *newlines += static_cast<std::uint64_t>(std::popcount(block_newlines & before));
      });
}

// Compiled for the CPU that runs it, so that the verification and the line
// count inline here with the popcnt instruction (std::popcount is a libgcc
// call for x86-64's baseline).
__attribute__((target("avx512f,avx512bw,avx512vbmi,popcnt"))) KeywordScanner::Hit FindVbmi(
    const Probe* probes, size_t count, const std::uint8_t (*tables)[128], const char* data, size_t n, size_t i,
    size_t* stopped, std::uint64_t* newlines) {
  return FindCounting(probes, count, data, n, i, stopped, newlines,
                      [&](size_t from, std::uint64_t* candidates, std::uint64_t* block_newlines, std::uint64_t* lines) {
                        return NextVbmiCandidates(tables, data, n, from, candidates, block_newlines, lines);
                      });
}

__attribute__((target("avx2"))) inline __m256i NibbleTable(const std::uint8_t* table16) {
  return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table16)));
}

// The keywords that have `bytes` (32 of them) at the tables' offset, a bit each.
__attribute__((target("avx2"))) inline __m256i KeywordsWith(__m256i bytes, __m256i low, __m256i high) {
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  const __m256i lo = _mm256_and_si256(bytes, nibble);
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), nibble);
  return _mm256_and_si256(_mm256_shuffle_epi8(low, lo), _mm256_shuffle_epi8(high, hi));
}

// A bit per byte of 32: where the compare `equal` holds.
__attribute__((target("avx2"))) inline std::uint32_t ByteBits(__m256i equal) {
  return static_cast<std::uint32_t>(_mm256_movemask_epi8(equal));
}

// The 32 starts from `p` (whose first 32 bytes are `bytes`) that begin with
// a keyword's three leading bytes, a bit each.
__attribute__((target("avx2"))) inline std::uint32_t TeddyStarts(const char* p, __m256i bytes, const __m256i (&low)[3],
                                                                 const __m256i (&high)[3]) {
  const __m256i keywords = _mm256_and_si256(
      _mm256_and_si256(KeywordsWith(bytes, low[0], high[0]), KeywordsWith(Load32(p + 1), low[1], high[1])),
      KeywordsWith(Load32(p + 2), low[2], high[2]));
  return ~ByteBits(_mm256_cmpeq_epi8(keywords, _mm256_setzero_si256()));
}

// Teddy with AVX2: each table byte says which keywords have, at offset j,
// a byte with that low (or high) nibble; a byte's two lookups and'ed say
// which keywords have exactly that byte there (one keyword a bit). Three
// offsets, two vpshufb each, for all keywords at once per 32 starts, where
// the pair compares cost two loads and compares per keyword; with the
// registers that leaves, the newlines are counted in the same pass (the
// pair loop ran out of registers for that). Returns like NextVbmiCandidates.
__attribute__((target("avx2,popcnt"), noinline)) size_t NextTeddyCandidates(const KeywordScanner::NibbleTables& tables,
                                                                            const char* data, size_t n, size_t i,
                                                                            std::uint64_t* candidates,
                                                                            std::uint64_t* block_newlines,
                                                                            std::uint64_t* newlines) {
  static_assert(KeywordScanner::kFingerprint == 3);
  __m256i low[3], high[3];
  for (size_t j = 0; j < 3; ++j) {
    low[j] = NibbleTable(tables.low[j]);
    high[j] = NibbleTable(tables.high[j]);
  }
  const __m256i newline = _mm256_set1_epi8('\n');
  std::uint64_t lines = 0;
  for (; i + 64 + KeywordScanner::kFingerprint - 1 <= n; i += 64) {
    const char* p = data + i;
    const __m256i first = Load32(p), second = Load32(p + 32);
    const std::uint64_t found =
        TeddyStarts(p, first, low, high) | std::uint64_t{TeddyStarts(p + 32, second, low, high)} << 32;
    const std::uint64_t ends =
        ByteBits(_mm256_cmpeq_epi8(first, newline)) | std::uint64_t{ByteBits(_mm256_cmpeq_epi8(second, newline))} << 32;
    if (found != 0) {
      *candidates = found;
      *block_newlines = ends;
      *newlines += lines;
      return i;
    }
    lines += static_cast<std::uint64_t>(std::popcount(ends));
  }
  *candidates = 0;
  *newlines += lines;
  return i;
}

__attribute__((target("avx2,popcnt"))) KeywordScanner::Hit FindTeddy(
    const Probe* probes, size_t count, const KeywordScanner::NibbleTables& tables, const char* data, size_t n,
    size_t i, size_t* stopped, std::uint64_t* newlines) {
  return FindCounting(probes, count, data, n, i, stopped, newlines,
                      [&](size_t from, std::uint64_t* candidates, std::uint64_t* block_newlines, std::uint64_t* lines) {
                        return NextTeddyCandidates(tables, data, n, from, candidates, block_newlines, lines);
                      });
}

// One instance per keyword count, indexed by count - 1.
using FindFunction = KeywordScanner::Hit (*)(const Probe*, size_t, const char*, size_t, size_t, size_t*);
constexpr auto kFindAvx2 = []<size_t... kMinus1>(std::index_sequence<kMinus1...>) {
  return std::array<FindFunction, sizeof...(kMinus1)>{&FindAvx2<kMinus1 + 1>...};
}(std::make_index_sequence<KeywordScanner::kMaxKeywords>());

__attribute__((target("avx2"))) inline std::uint32_t NewlineMask32(const char* at) {
  return ByteBits(_mm256_cmpeq_epi8(Load32(at), _mm256_set1_epi8('\n')));
}

// Whole 64-byte steps; *stopped is where they end.
__attribute__((target("avx2,popcnt"))) size_t CountNewlinesAvx2(const char* data, size_t n, size_t* stopped) {
  size_t count = 0;
  size_t i = 0;
  for (; i + 64 <= n; i += 64)
    count += static_cast<size_t>(std::popcount(NewlineMask32(data + i)) + std::popcount(NewlineMask32(data + i + 32)));
  *stopped = i;
  return count;
}

// Newlines in data[0, n) and where the last is (npos when none). The spans
// between two records are short (a few hundred bytes in job-dense logs), so
// what the 64-byte steps leave is one 32-byte step and one overlapping load
// with the bytes already counted masked off, not a byte loop.
__attribute__((target("avx2,popcnt"))) size_t CountNewlinesLastAvx2(const char* data, size_t n, size_t* last) {
  if (n < 32) {
    size_t count = 0;
    *last = KeywordScanner::npos;
    for (size_t i = 0; i < n; ++i)
      if (data[i] == '\n') {
        ++count;
        *last = i;
      }
    return count;
  }
  // Counting alone, without a branch: in noisy logs a newline comes every
  // few steps, unpredictably, and tracking the last one in the loop cost
  // a mispredicted branch each time.
  size_t i = 0;
  size_t count = CountNewlinesAvx2(data, n, &i);
  if (i + 32 <= n) {
    count += static_cast<size_t>(std::popcount(NewlineMask32(data + i)));
    i += 32;
  }
  // The last 32 bytes: those not counted yet are counted, and the last
  // newline is usually among them (the line before a record is short).
  const std::uint32_t tail = NewlineMask32(data + n - 32);
  if (i < n) count += static_cast<size_t>(std::popcount(tail & (~std::uint32_t{0} << (i - (n - 32)))));
  if (tail != 0) {
    *last = n - 1 - static_cast<size_t>(std::countl_zero(tail));
  } else {
    const void* found = count == 0 ? nullptr : memrchr(data, '\n', n - 32);
    *last = found ? static_cast<size_t>(static_cast<const char*>(found) - data) : KeywordScanner::npos;
  }
  return count;
}

// 128 bytes an iteration in two independent compare-and-count chains.
__attribute__((target("avx512f,avx512bw,popcnt"))) size_t CountNewlinesAvx512(const char* data, size_t n,
                                                                              size_t* stopped) {
  const __m512i newline = _mm512_set1_epi8('\n');
  size_t a = 0, b = 0;
  size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    a += static_cast<size_t>(std::popcount(_mm512_cmpeq_epi8_mask(_mm512_loadu_si512(data + i), newline)));
    b += static_cast<size_t>(std::popcount(_mm512_cmpeq_epi8_mask(_mm512_loadu_si512(data + i + 64), newline)));
  }
  *stopped = i;
  return a + b;
}

bool CpuHasAvx512Bw() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("popcnt");
  return has;
}

bool CpuHasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
  return has;
}

bool CpuHasAvx512Vbmi() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vbmi");
  return has;
}

#endif  // JOBVIZ_HAVE_AVX2_PATH

}  // namespace

}  // namespace jobviz
