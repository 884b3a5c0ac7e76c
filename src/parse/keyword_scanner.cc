#include "parse/keyword_scanner.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace jobviz {

namespace {

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

KeywordScanner::KeywordScanner(std::initializer_list<std::string_view> keywords) {
  if (keywords.size() == 0 || keywords.size() > kMaxKeywords)
    throw std::invalid_argument("KeywordScanner: 1 to 5 keywords");
  for (std::string_view k : keywords) {
    if (k.size() < 2) throw std::invalid_argument("KeywordScanner: keyword shorter than 2 bytes");
    keywords_[count_++] = k;
    if (k.size() > longest_) longest_ = k.size();
  }
}

int KeywordScanner::MatchAt(std::string_view text, size_t position) const {
  for (size_t k = 0; k < count_; ++k) {
    const std::string_view kw = keywords_[k];
    if (text.size() - position >= kw.size() &&
        std::memcmp(text.data() + position, kw.data(), kw.size()) == 0)
      return static_cast<int>(k);
  }
  return -1;
}

KeywordScanner::Hit KeywordScanner::FindNext(std::string_view text, size_t from) const {
  const char* data = text.data();
  const size_t n = text.size();
  size_t i = from;

  std::array<Bytes16, kMaxKeywords> first{}, last{};
  std::array<size_t, kMaxKeywords> last_offset{};
  for (size_t k = 0; k < count_; ++k) {
    first[k] = Splat(keywords_[k].front());
    last[k] = Splat(keywords_[k].back());
    last_offset[k] = keywords_[k].size() - 1;
  }

  // Vector loop: while 16 candidate starts plus the longest keyword fit.
  while (i + 16 + longest_ <= n) {
    Bytes16 block = Load(data + i);
    Mask16 hits = (block == first[0]) & (Load(data + i + last_offset[0]) == last[0]);
    for (size_t k = 1; k < count_; ++k)
      hits |= (block == first[k]) & (Load(data + i + last_offset[k]) == last[k]);
    if (AnySet(hits)) {
      for (size_t lane = 0; lane < 16; ++lane) {
        if (!hits[lane]) continue;
        const int k = MatchAt(text, i + lane);
        if (k >= 0) return {i + lane, k};
      }
    }
    i += 16;
  }
  for (; i < n; ++i) {
    const int k = MatchAt(text, i);
    if (k >= 0) return {i, k};
  }
  return {npos, -1};
}

size_t CountNewlines(std::string_view text) {
  const char* data = text.data();
  const size_t n = text.size();
  const Bytes16 newline = Splat('\n');
  size_t count = 0;
  size_t i = 0;
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
