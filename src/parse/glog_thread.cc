#include "parse/glog_thread.h"

#include <cstddef>

#include "parse/digit_chunks.h"

namespace jobviz {

std::uint32_t GlogThread(std::string_view line) {
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (line.size() < 24) return 0;
  const char level = line[0];
  if ((level != 'I' && level != 'W' && level != 'E' && level != 'F') || !digit(line[1]) || !digit(line[2]) ||
      !digit(line[3]) || !digit(line[4]) || line[5] != ' ' || line[8] != ':')
    return 0;
  // As glog prints it: the time of day in bytes 6-20, a space, then the
  // thread id of up to seven digits and a space, read as one word (half the
  // cost of a loop per byte). Any other spacing goes the general way.
  if (line.size() >= 30 && line[21] == ' ' && !HasByte(Load8(line.data() + 6), ' ') &&
      !HasByte(Load8(line.data() + 13), ' ')) {
    const std::uint64_t chunk = Load8(line.data() + 22);
    const int digits = LeadingDigits(chunk);
    if (digits > 0 && digits < 8)
      return line[22 + static_cast<size_t>(digits)] == ' ' ? static_cast<std::uint32_t>(DigitsValue(chunk, digits)) : 0;
  }
  size_t i = line.find(' ', 6);
  while (i < line.size() && line[i] == ' ') ++i;
  std::uint64_t thread = 0;
  size_t digits = 0;
  for (; i < line.size() && digit(line[i]) && digits < 10; ++i, ++digits) thread = thread * 10 + static_cast<unsigned>(line[i] - '0');
  return digits > 0 && i < line.size() && line[i] == ' ' && thread <= UINT32_MAX ? static_cast<std::uint32_t>(thread) : 0;
}

}  // namespace jobviz
