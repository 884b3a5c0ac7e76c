// The glog prefix's thread id ("I1020 09:15:07.265326 22317 file.cc:1] ..."):
// a log that two processes wrote at once shows as two thread ids taking
// turns (model/run_splitter.h), and a restart as a new one.
#pragma once

#include <cstdint>
#include <string_view>

namespace jobviz {

// The thread id of the line's glog prefix, 0 for lines without one (Python
// logging, bare records) or with an id past 32 bits.
std::uint32_t GlogThread(std::string_view line);

}  // namespace jobviz
