// Shared by the log generator and the pipeline demo: the 1F1B schedule and
// the per-machine option values of their command lines.
#pragma once

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace pipeline {

enum class Kind { kForward, kBackward };
struct Op {
  Kind kind;
  int micro_batch;
};

// 1F1B order of one stage: warm-up forwards, one forward one backward, cool-down backwards.
inline std::vector<Op> OneFOneB(int stage, int stages, int microbatches) {
  std::vector<Op> ops;
  const int warmup = std::min(stages - stage - 1, microbatches);
  for (int i = 0; i < warmup; ++i) ops.push_back({Kind::kForward, i});
  for (int i = 0; i < microbatches - warmup; ++i) {
    ops.push_back({Kind::kForward, warmup + i});
    ops.push_back({Kind::kBackward, i});
  }
  for (int i = microbatches - warmup; i < microbatches; ++i) ops.push_back({Kind::kBackward, i});
  return ops;
}

// "machine1=+3.7,machine2=-1.2" -> {1: 3.7, 2: -1.2}
inline std::map<int, double> ParseMachineValues(const std::string& text) {
  std::map<int, double> values;
  size_t begin = 0;
  while (begin < text.size()) {
    const size_t comma = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, comma - begin);
    begin = comma + 1;
    const size_t eq = item.find('=');
    if (eq == std::string::npos || item.rfind("machine", 0) != 0)
      throw std::runtime_error("expected machineN=VALUE, got '" + item + "'");
    values[std::stoi(item.substr(7, eq - 7))] = std::stod(item.substr(eq + 1));
  }
  return values;
}

}  // namespace pipeline
