// Finds where any of a few keywords occur in a large block of text, in one
// pass. Almost every byte of a worker log is noise; this is the loop that
// touches all of them, so it compares 16 bytes at a time (SIMD via GCC/Clang
// vector extensions: SSE2 on x86-64, NEON on Arm) and only looks closer at
// the rare places where a keyword's first and last bytes both match.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace jobviz {

class KeywordScanner {
 public:
  static constexpr size_t kMaxKeywords = 5;
  struct Hit {
    size_t position;  // npos when there is none
    int keyword;      // index into the keywords given to the constructor
  };
  static constexpr size_t npos = std::string_view::npos;

  // Each keyword is at least 2 bytes long; at most kMaxKeywords of them.
  // The views must outlive the scanner.
  explicit KeywordScanner(std::initializer_list<std::string_view> keywords);

  // The first occurrence of any keyword starting at or after `from`.
  Hit FindNext(std::string_view text, size_t from) const;

 private:
  int MatchAt(std::string_view text, size_t position) const;

  std::array<std::string_view, kMaxKeywords> keywords_{};
  size_t count_ = 0;
  size_t longest_ = 0;
};

// Number of '\n' bytes in `text` (vectorised like the scanner).
size_t CountNewlines(std::string_view text);

}  // namespace jobviz
