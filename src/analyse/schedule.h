// Which pipeline schedule the jobs follow, and the bubble that schedule
// would have with equal stages and free communication: the "ideal" the
// measured bubble is held against (docs/analysis.md, "The ideal bubble").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/model.h"

namespace jobviz {

struct TypeAnalysis;

// A job type as the framework's schedulers name them: the pass, and the
// model chunk it belongs to ("forward1": chunk 1; "forward": none).
enum class Pass : std::uint8_t { kForward, kBackward, kBackwardInput, kBackwardWeight, kOther };
struct JobKind {
  Pass pass = Pass::kOther;
  int chunk = -1;
};
// forward[N], backward[N], backward_b[N], backward_w[N]; anything else
// (optimizer, lr, recv_forward, backward_w0_reduce, ...) is kOther.
JobKind ClassifyJobType(const std::string& type);
// Whether a job type is a pass (not kOther), each name classified once per thread.
bool IsPass(Name type);

// 1F1B's order of one stage's passes in a step: min(p - s - 1, m) warm-up
// forwards, then a forward and a backward at a time, then the backwards.
// Each entry: (forward, micro-batch).
std::vector<std::pair<bool, int>> OneF1BOrder(int stages, int stage, int micro_batches);

enum class ScheduleKind { kUnknown, kSingleStage, kFThenB, k1F1B, kEager1F1B, kInterleaved1F1B, kZeroBubbleH1, kZeroBubbleV };

struct ScheduleFit {
  ScheduleKind kind = ScheduleKind::kUnknown;
  std::string name = "unknown";  // as the summary names it: "1F1B", "interleaved 1F1B", "ZB-H1", ...
  int chunks = 1;                // model chunks per stage (v)
  std::optional<double> ideal_bubble;  // share of a step's window that is idle; nullopt: no ideal known
  std::string note;              // why there is no ideal, or what it assumes
};

// From the job types (chunks, split backward) and, for plain forward and
// backward jobs, the order on each stage: how many forwards come before the
// first backward in a step (1F1B: p - s on stage s; Eager1F1B: 2(p - s) - 1;
// FThenB: all of them). `stages` and `micro_batches` as the analysis counts
// them; `types` gives the mean pass times the zero-bubble formula needs.
// The pipelines' orders are read on up to `threads` threads.
ScheduleFit RecogniseSchedule(const Timeline& timeline, int stages, int micro_batches,
                              const std::map<std::string, TypeAnalysis>& types, int threads = 1);

}  // namespace jobviz
