// Shared by the generators and the pipeline demo: the 1F1B schedule, one
// step of it timed, the framework's glog prefix and time format, a seeded
// random stream, and the per-machine option values of their command lines.
#pragma once

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
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

// xorshift64: the generators' randomness, one stream per (seed, stream).
class Random {
 public:
  explicit Random(std::uint64_t seed, std::uint64_t stream = 0)
      : state_(seed * 0x9E3779B97F4A7C15ull + stream * 7919 + 1) {}
  std::uint64_t Next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
  }
  double Uniform() { return static_cast<double>(Next() >> 11) / 9007199254740992.0; }
  int Below(int n) { return static_cast<int>(Next() % static_cast<std::uint64_t>(n)); }

 private:
  std::uint64_t state_;
};

// "I1020 09:15:07.265326 22317 f.cc:217] ": the glog prefix of `epoch_us`, in UTC, appended to `out`.
inline void AppendGlogPrefix(std::string& out, double epoch_us, int thread, const char* source) {
  const std::time_t seconds = static_cast<std::time_t>(epoch_us / 1e6);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[96];
  std::snprintf(text, sizeof text, "I%02d%02d %02d:%02d:%02d.%06d %5d %s] ", tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                tm.tm_min, tm.tm_sec, static_cast<int>(epoch_us - static_cast<double>(seconds) * 1e6), thread, source);
  out += text;
}

// Milliseconds since the epoch with six decimals, as the framework prints job times.
inline std::string Millis(double epoch_us) {
  char text[48];
  const std::int64_t ns = static_cast<std::int64_t>(epoch_us * 1000.0);
  std::snprintf(text, sizeof text, "%" PRId64 ".%06" PRId64, ns / 1000000, ns % 1000000);
  return text;
}

// An op of one stage's step, timed (TimeStep); the optimizer comes last.
enum class StepKind { kForward, kBackward, kOptimizer };
struct TimedOp {
  StepKind kind;
  int micro_batch;
  double start_us = 0, end_us = 0;
};

inline const char* KindName(StepKind k) {
  return k == StepKind::kForward ? "forward" : k == StepKind::kBackward ? "backward" : "optimizer";
}

struct StepTimes {
  double forward_us = 900, backward_us = 1800, optimizer_us = 400, transfer_us = 60;
};

// Times every op of one step of `stages` stages starting at `step_start_us`:
// an op starts when its stage is free and its input has arrived from the
// neighbouring stage. `duration(base_us)` gives each op's length (jitter);
// a `duration(base_us, stage)` is told the stage too (a slow GPU's).
template <class Duration>
std::vector<std::vector<TimedOp>> TimeStep(int stages, int microbatches, const StepTimes& times, double step_start_us,
                                           Duration&& duration) {
  std::vector<std::vector<TimedOp>> order(static_cast<size_t>(stages));
  for (int s = 0; s < stages; ++s) {
    for (const Op& op : OneFOneB(s, stages, microbatches))
      order[s].push_back({op.kind == Kind::kForward ? StepKind::kForward : StepKind::kBackward, op.micro_batch});
    order[s].push_back({StepKind::kOptimizer, 0});
  }
  std::vector<std::vector<double>> fwd_end(static_cast<size_t>(stages), std::vector<double>(static_cast<size_t>(microbatches), -1));
  std::vector<std::vector<double>> bwd_end = fwd_end;
  std::vector<size_t> next(static_cast<size_t>(stages), 0);
  std::vector<double> free_at(static_cast<size_t>(stages), step_start_us);
  for (bool progressed = true; progressed;) {
    progressed = false;
    for (int s = 0; s < stages; ++s) {
      while (next[s] < order[s].size()) {
        TimedOp& op = order[s][next[s]];
        double ready = free_at[s];
        if (op.kind == StepKind::kForward && s > 0) {
          if (fwd_end[s - 1][op.micro_batch] < 0) break;
          ready = std::max(ready, fwd_end[s - 1][op.micro_batch] + times.transfer_us);
        } else if (op.kind == StepKind::kBackward && s + 1 < stages) {
          if (bwd_end[s + 1][op.micro_batch] < 0) break;
          ready = std::max(ready, bwd_end[s + 1][op.micro_batch] + times.transfer_us);
        }
        const double base = op.kind == StepKind::kForward    ? times.forward_us
                            : op.kind == StepKind::kBackward ? times.backward_us
                                                             : times.optimizer_us;
        op.start_us = ready;
        if constexpr (std::is_invocable_v<Duration, double, int>)
          op.end_us = ready + duration(base, s);
        else
          op.end_us = ready + duration(base);
        free_at[s] = op.end_us;
        if (op.kind == StepKind::kForward) fwd_end[s][op.micro_batch] = op.end_us;
        if (op.kind == StepKind::kBackward) bwd_end[s][op.micro_batch] = op.end_us;
        ++next[s];
        progressed = true;
      }
    }
  }
  return order;
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
