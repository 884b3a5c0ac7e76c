#include "parse/keyword_scanner.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "parse/keyword_simd.h"

namespace jobviz {

namespace {

// Bytes of log text from most to least frequent (English prose, code, glog
// prefixes, numbers); a byte not listed counts as rarer than all of them.
// Only speed depends on this order, never a result.
constexpr std::string_view kByFrequency =
    " etaoinsr0123ldchum_.p456789:f=g,bywv-/k\n[]()ISETAx\"'CRPNODLMFBUGjqzHWVKYJXQZ";

int Rank(char c) {  // higher = rarer
  const size_t at = kByFrequency.find(c);
  return at == std::string_view::npos ? static_cast<int>(kByFrequency.size()) : static_cast<int>(at);
}


typedef std::uint8_t Bytes16 __attribute__((vector_size(16)));
typedef std::int8_t Mask16 __attribute__((vector_size(16)));  // comparison results: 0 or -1

inline Bytes16 Load(const char* p) {
  Bytes16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline Bytes16 Splat(char c) {
  Bytes16 v;
  std::memset(&v, static_cast<unsigned char>(c), sizeof v);
  return v;
}

inline bool AnySet(Mask16 mask) {
  std::uint64_t lo, hi;
  std::memcpy(&lo, &mask, 8);
  std::memcpy(&hi, reinterpret_cast<const char*>(&mask) + 8, 8);
  return (lo | hi) != 0;
}


}  // namespace

std::array<size_t, 2> KeywordScanner::RarestPair(std::string_view keyword) {
  size_t rarest = 0;
  for (size_t i = 1; i < keyword.size(); ++i)
    if (Rank(keyword[i]) > Rank(keyword[rarest])) rarest = i;
  size_t second = rarest == 0 ? 1 : 0;
  for (size_t i = 0; i < keyword.size(); ++i)
    if (i != rarest && keyword[i] != keyword[rarest] && Rank(keyword[i]) > Rank(keyword[second])) second = i;
  return {std::min(rarest, second), std::max(rarest, second)};
}

KeywordScanner::KeywordScanner(std::initializer_list<std::string_view> keywords, Simd simd) {
  if (keywords.size() == 0 || keywords.size() > kMaxKeywords)
    throw std::invalid_argument("KeywordScanner: 1 to 5 keywords");
  for (std::string_view k : keywords) {
    if (k.size() < 2) throw std::invalid_argument("KeywordScanner: keyword shorter than 2 bytes");
    const auto [offset1, offset2] = RarestPair(k);
    probes_[count_++] = {k, static_cast<std::uint32_t>(offset1), static_cast<std::uint32_t>(offset2)};
    reach_ = std::max(reach_, offset2);
  }
#ifdef JOBVIZ_HAVE_AVX2_PATH
  avx2_ = simd != Simd::kPortable && CpuHasAvx2();
  // The lookup tables hold ASCII and a bit per keyword; every keyword must
  // be at least kFingerprint long.
  static_assert(kMaxKeywords <= 8, "one bit per keyword in a table byte");
  const auto fits_tables = [](const Probe& probe) {
    const std::string_view kw = probe.keyword;
    return kw.size() >= kFingerprint &&
           std::all_of(kw.begin(), kw.begin() + kFingerprint, [](char c) { return static_cast<unsigned char>(c) < 128; });
  };
  const bool all_fit = std::all_of(probes_.begin(), probes_.begin() + static_cast<long>(count_), fits_tables);
  vbmi_ = simd == Simd::kBest && CpuHasAvx512Vbmi() && all_fit;
  teddy_ = !vbmi_ && avx2_ && simd != Simd::kAvx2Pairs && all_fit;
  for (size_t k = 0; k < count_ && (vbmi_ || teddy_); ++k)
    for (size_t j = 0; j < kFingerprint; ++j) {
      const auto byte = static_cast<unsigned char>(probes_[k].keyword[j]);
      const auto bit = static_cast<std::uint8_t>(1u << k);
      tables_[j][byte] |= bit;
      nibbles_.low[j][byte & 0x0f] |= bit;
      nibbles_.high[j][byte >> 4] |= bit;
    }
#else
  (void)simd;
#endif
}

int KeywordScanner::MatchAt(std::string_view text, size_t position) const {
  return MatchProbes(probes_.data(), count_, text.data(), text.size(), position);
}

KeywordScanner::Hit KeywordScanner::FindNext(std::string_view text, size_t from) const {
  std::uint64_t newlines = 0;
  size_t counted_to = from;
  return Find(text, from, &newlines, &counted_to);
}

KeywordScanner::Hit KeywordScanner::FindNextCountingLines(std::string_view text, size_t from,
                                                          std::uint64_t* newlines, size_t* last_newline) const {
  size_t counted_to = from;
  const Hit hit = Find(text, from, newlines, &counted_to);
  const size_t end = hit.position == npos ? text.size() : hit.position;
  // What the scan did not count.
  const std::string_view rest = text.substr(counted_to, end - counted_to);
  if (rest.empty()) {  // the SIMD scans count up to the hit: the common case, without two calls
    if (last_newline) *last_newline = npos;
    return hit;
  }
  if (!last_newline) {
    *newlines += CountNewlines(rest);
    return hit;
  }
  size_t last = npos;
  *newlines += CountNewlinesLast(rest, &last);
  *last_newline = last == npos ? npos : counted_to + last;
  return hit;
}

KeywordScanner::Hit KeywordScanner::Find(std::string_view text, size_t from, std::uint64_t* newlines,
                                         size_t* counted_to) const {
  const char* data = text.data();
  const size_t n = text.size();
  size_t i = from;
#ifdef JOBVIZ_HAVE_AVX2_PATH
  if (vbmi_ || teddy_) {
    const Hit hit = vbmi_ ? FindVbmi(probes_.data(), count_, tables_.data(), data, n, i, &i, newlines)
                          : FindTeddy(probes_.data(), count_, nibbles_, data, n, i, &i, newlines);
    *counted_to = hit.position != npos ? hit.position : i;
    if (hit.position != npos) return hit;
  }
  if (avx2_) {
    const Hit hit = kFindAvx2[count_ - 1](probes_.data(), reach_, data, n, i, &i);
    if (hit.position != npos) return hit;
  }
#else
  (void)newlines;
  (void)counted_to;
#endif
  std::array<Bytes16, kMaxKeywords> byte1{}, byte2{};
  for (size_t k = 0; k < count_; ++k) {
    byte1[k] = Splat(probes_[k].keyword[probes_[k].offset1]);
    byte2[k] = Splat(probes_[k].keyword[probes_[k].offset2]);
  }
  // Vector loop: while 16 candidate starts plus the farthest probe fit.
  for (; i + 16 + reach_ <= n; i += 16) {
    Mask16 hits = (Load(data + i + probes_[0].offset1) == byte1[0]) &
                  (Load(data + i + probes_[0].offset2) == byte2[0]);
    for (size_t k = 1; k < count_; ++k)
      hits |= (Load(data + i + probes_[k].offset1) == byte1[k]) & (Load(data + i + probes_[k].offset2) == byte2[k]);
    if (!AnySet(hits)) continue;
    for (size_t lane = 0; lane < 16; ++lane) {
      if (!hits[lane]) continue;
      const int k = MatchAt(text, i + lane);
      if (k >= 0) return {i + lane, k};
    }
  }
  for (; i < n; ++i) {
    const int k = MatchAt(text, i);
    if (k >= 0) return {i, k};
  }
  return {npos, -1};
}

size_t CountNewlinesLast(std::string_view text, size_t* last, KeywordScanner::Simd simd) {
#ifdef JOBVIZ_HAVE_AVX2_PATH
  if (simd != KeywordScanner::Simd::kPortable && CpuHasAvx2()) return CountNewlinesLastAvx2(text.data(), text.size(), last);
#endif
  const void* found = memrchr(text.data(), '\n', text.size());
  *last = found ? static_cast<size_t>(static_cast<const char*>(found) - text.data()) : KeywordScanner::npos;
  return CountNewlines(text, simd);
}

size_t CountNewlines(std::string_view text, KeywordScanner::Simd simd) {
  using Simd = KeywordScanner::Simd;
  const char* data = text.data();
  const size_t n = text.size();
  size_t count = 0;
  size_t i = 0;
#ifdef JOBVIZ_HAVE_AVX2_PATH
  if (simd == Simd::kBest && CpuHasAvx512Bw())
    count = CountNewlinesAvx512(data, n, &i);
  else if (simd != Simd::kPortable && CpuHasAvx2())
    count = CountNewlinesAvx2(data, n, &i);
#else
  (void)simd;
#endif
  const Bytes16 newline = Splat('\n');
  while (i + 16 <= n) {
    // Byte lanes count up to 255 before they are summed and reset.
    Bytes16 lanes = Splat('\0');
    const size_t blocks = std::min<size_t>((n - i) / 16, 255);
    for (size_t b = 0; b < blocks; ++b, i += 16)
      lanes -= std::bit_cast<Bytes16>(Load(data + i) == newline);  // true lanes are 0xff = -1
    for (int lane = 0; lane < 16; ++lane) count += lanes[lane];
  }
  for (; i < n; ++i) count += data[i] == '\n';
  return count;
}

}  // namespace jobviz
