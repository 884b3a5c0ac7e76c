// Eight bytes of log text at a time, as one 64-bit word (the first byte in
// the low byte, as x86 and ARM load it): where a run of digits ends, what
// it is worth, and whether a byte is among them, with no branch per byte;
// short compares and searches without a libc call.
// The job line's numbers and the glog prefix's thread id are read this way:
// a loop per digit whose end moves from line to line costs more than the
// bytes.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace jobviz {

// Eight bytes at p, the first in the low byte.
inline std::uint64_t Load8(const char* p) {
  std::uint64_t chunk;
  std::memcpy(&chunk, p, sizeof chunk);
  return chunk;
}

// How many of the eight bytes lead with ASCII digits. A byte is a digit when
// its high nibble is 3 and adding 6 keeps it so; a carry out of a byte >=
// 0xfa only spoils bytes after the first non-digit, which do not count.
inline int LeadingDigits(std::uint64_t chunk) {
  constexpr std::uint64_t kHigh = 0xf0f0f0f0f0f0f0f0, kThrees = 0x3030303030303030, kSixes = 0x0606060606060606;
  const std::uint64_t not_digit = ((chunk & kHigh) ^ kThrees) | (((chunk + kSixes) & kHigh) ^ kThrees);
  return not_digit == 0 ? 8 : std::countr_zero(not_digit) / 8;
}

// The value of the first `count` (1-8) digits of the chunk: moved to its top
// bytes behind '0's, then added up in pairs, fours and eights (three multiplies).
inline std::uint64_t DigitsValue(std::uint64_t chunk, int count) {
  constexpr std::uint64_t kThrees = 0x3030303030303030;
  if (count < 8) chunk = (chunk << (8 * (8 - count))) | (kThrees >> (8 * count));
  chunk -= kThrees;
  chunk = (chunk * 10 + (chunk >> 8)) & 0x00ff00ff00ff00ff;
  chunk = (chunk * 100 + (chunk >> 16)) & 0x0000ffff0000ffff;
  return (chunk * 10000 + (chunk >> 32)) & 0xffffffff;
}

// Whether any of the eight bytes is `byte` (the classic zero-byte test on
// the bytes xor'ed with it: exact, as a borrow only runs on from a zero byte).
inline bool HasByte(std::uint64_t chunk, char byte) {
  const std::uint64_t x = chunk ^ (0x0101010101010101 * static_cast<unsigned char>(byte));
  return ((x - 0x0101010101010101) & ~x & 0x8080808080808080) != 0;
}

// Whether `byte` is among the `size` bytes at p: sixteen at a time with
// SSE2 (every x86-64 has it), else eight, the last ones overlapping; the
// compares are or'ed and tested once, not a branch each (a libc call, or a
// branch every eight bytes, cost more than the ~60 bytes of a glog prefix
// that it looks at).
inline bool ContainsByte(const char* p, size_t size, char byte) {
#if defined(__SSE2__)
  if (size >= 16) {
    const __m128i wanted = _mm_set1_epi8(byte);
    const auto at = [&](size_t i) {
      return _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)), wanted);
    };
    __m128i found = at(size - 16);
    for (size_t i = 0; i + 16 < size; i += 16) found = _mm_or_si128(found, at(i));
    return _mm_movemask_epi8(found) != 0;
  }
#endif
  if (size < 8) return std::memchr(p, byte, size) != nullptr;
  for (size_t i = 0; i + 8 < size; i += 8)
    if (HasByte(Load8(p + i), byte)) return true;
  return HasByte(Load8(p + size - 8), byte);
}

// Where the last `byte` of the `size` bytes at p is (SIZE_MAX when none):
// sixteen at a time back from the end with SSE2. A job line's start lies
// a glog prefix (~60 bytes) before its keyword, where a libc call cost
// more than the search.
inline size_t LastByte(const char* p, size_t size, char byte) {
  size_t end = size;
#if defined(__SSE2__)
  const __m128i wanted = _mm_set1_epi8(byte);
  for (; end >= 16; end -= 16) {
    const auto found = static_cast<unsigned>(
        _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + end - 16)), wanted)));
    if (found != 0) return end - 16 + static_cast<size_t>(std::bit_width(found)) - 1;
  }
#endif
  for (; end > 0; --end)
    if (p[end - 1] == byte) return end - 1;
  return SIZE_MAX;
}

// Whether the `size` bytes at a and b are the same, eight at a time, the
// last eight overlapping.
inline bool SameBytes(const char* a, const char* b, size_t size) {
  if (size < 8) return std::memcmp(a, b, size) == 0;
  for (size_t i = 0; i + 8 < size; i += 8)
    if (Load8(a + i) != Load8(b + i)) return false;
  return Load8(a + size - 8) == Load8(b + size - 8);
}

}  // namespace jobviz
