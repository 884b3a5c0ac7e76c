#include "analyse/cause_text.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_cause_text_test {

using namespace jobviz;

namespace {

// A run whose top cause is `kind`, saving 5.04 ms of a 50.4 ms step (10%).
Bottleneck TopCause(WhatIfKind kind) {
  Bottleneck b;
  b.ran = true;
  b.steps = 4;
  b.step_gap = 2'000'000;
  for (int k = 0; k < static_cast<int>(WhatIfKind::kCount); ++k) {
    WhatIf w;
    w.kind = static_cast<WhatIfKind>(k);
    b.what_if.push_back(w);
  }
  WhatIf& w = b.what_if[static_cast<size_t>(kind)];
  w.applies = true;
  w.saved = 5'040'000;
  w.gain = 0.1;
  b.causes.push_back({kind, "", w.saved, w.gain});
  return b;
}

SlowWorker Slow(const std::string& name) {
  SlowWorker w;
  w.name = name;
  w.compared_with = "its tensor-parallel peers";
  w.factor = 1.3;
  return w;
}

}  // namespace

TEST_CASE("Each cause's verdict is one sentence that reads") {
  const std::vector<SlowWorker> one = {Slow("machine1 worker 3")}, two = {Slow("machine1 worker 3"), Slow("machine2 worker 0")};
  CauseFacts facts;
  facts.slow_workers = &two;
  const std::string slow = PlainVerdict(TopCause(WhatIfKind::kNoSlowWorkers), facts, 0.5, nullptr);
  CHECK(slow == "machine1 worker 3 runs its jobs 1.30x slower than its tensor-parallel peers (and 1 more worker is slow): "
                "check that GPU and its host (clocks, temperature, other processes); at their peers' speed, each step "
                "would be about 5.04 ms (10%) shorter.");
  const std::string outliers = PlainVerdict(TopCause(WhatIfKind::kNoOutliers), facts, 0.5, nullptr);
  CHECK(outliers.find("retried collectives), each step would be about 5.04 ms (10%) shorter.") != std::string::npos);
  // The gap and its share of the run: not gap x (steps - 1) / steps, which moves with the step count.
  const std::string gaps = PlainVerdict(TopCause(WhatIfKind::kNoStepGaps), facts, 0.5, nullptr);
  CHECK(gaps == "Nothing runs for 2.00 ms between steps, 10% of the run: time outside the pipeline (data loading, "
                "host work, logging, checkpoints).");
  for (const std::string& text : {slow, outliers, gaps}) {
    CHECK(text.find("each step cut") == std::string::npos);
    CHECK(text.find("step cut each step") == std::string::npos);
  }
  // What the replay changed: one slow worker at its peers' speed; two, each at theirs.
  const Bottleneck b = TopCause(WhatIfKind::kNoSlowWorkers);
  CHECK(ChangeText(WhatIfKind::kNoSlowWorkers, facts, b) == "2 slow workers, each at the speed of its tensor-parallel peers");
  facts.slow_workers = &one;
  CHECK(ChangeText(WhatIfKind::kNoSlowWorkers, facts, b) == "1 slow worker at the speed of its tensor-parallel peers");
}

namespace {

// A run whose top cause is `kind` with the facts each cause's words read:
// hand-offs on the critical path, outliers, stalls, the gap between steps.
Bottleneck Described(WhatIfKind kind, size_t outliers) {
  Bottleneck b = TopCause(kind);
  b.path.hand_offs = {{0, 1, 4'000'000}, {2, 1, 12'000'000}};
  b.path.stall = 6'000'000;
  b.outlier_count = outliers;
  if (outliers > 0)
    b.outliers.push_back({"machine2 worker 5", 41, "backward", 3, 3'100'000, 1'000'000});
  return b;
}

// Every sentence form of every cause: the verdict, the cause's line and
// what its replay changed, per cause and for each number the words turn on
// (one slow worker or more, one outlier or more, with the worst named or
// not), and the verdicts with no cause. Kept in one text file, read whole.
std::string EverySentenceForm() {
  const std::vector<SlowWorker> one = {Slow("machine1 worker 3")};
  const std::vector<SlowWorker> two = {Slow("machine1 worker 3"), Slow("machine2 worker 0")};
  const std::vector<SlowWorker> three = {Slow("machine1 worker 3"), Slow("machine2 worker 0"), Slow("machine3 worker 7")};
  const std::vector<SlowWorker> none;
  std::ostringstream out;
  const auto forms = [&](const std::string& label, WhatIfKind kind, const std::vector<SlowWorker>& slow, size_t outliers) {
    const CauseFacts facts{2, 1.25, &slow};
    const Bottleneck b = Described(kind, outliers);
    const WhatIf& w = b.what_if[static_cast<size_t>(kind)];
    out << "[" << label << "]\nverdict: " << PlainVerdict(b, facts, 0.4, nullptr) << "\ncause: " << CauseText(w, facts, b)
        << "\nchange: " << ChangeText(kind, facts, b) << "\n\n";
  };
  forms("balanced_stages", WhatIfKind::kBalancedStages, none, 0);
  forms("free_hand_offs", WhatIfKind::kFreeHandOffs, none, 0);
  forms("no_outliers, one, the worst named", WhatIfKind::kNoOutliers, none, 1);
  forms("no_outliers, several, the worst named", WhatIfKind::kNoOutliers, none, 7);
  forms("no_stall", WhatIfKind::kNoStall, none, 0);
  forms("no_slow_workers, one", WhatIfKind::kNoSlowWorkers, one, 0);
  forms("no_slow_workers, two", WhatIfKind::kNoSlowWorkers, two, 0);
  forms("no_slow_workers, three", WhatIfKind::kNoSlowWorkers, three, 0);
  forms("no_step_gaps", WhatIfKind::kNoStepGaps, none, 0);
  const CauseFacts facts{2, 1.25, &none};
  const Bottleneck b = Described(WhatIfKind::kAll, 0);
  out << "[no slow worker found]\nchange: " << ChangeText(WhatIfKind::kNoSlowWorkers, facts, b) << "\n\n";
  out << "[all]\nchange: " << ChangeText(WhatIfKind::kAll, facts, b) << "\n\n";
  Bottleneck nothing = b;
  nothing.causes.clear();
  const double close = 0.38, far = 0.2;
  out << "[no cause]\nverdict: " << PlainVerdict(nothing, facts, 0.4, nullptr) << "\n\n";
  out << "[no cause, the bubble close to the schedule's]\nverdict: " << PlainVerdict(nothing, facts, 0.4, &close) << "\n\n";
  out << "[no cause, the bubble above the schedule's]\nverdict: " << PlainVerdict(nothing, facts, 0.4, &far) << "\n";
  return out.str();
}

}  // namespace

// The golden text: test/expected/cause_sentences.txt. After a change to
// the words, read the difference, then rewrite it with
//   JOBVIZ_UPDATE_GOLDEN=1 build/test/unit_tests -# '[#cause_text_test]'
TEST_CASE("Every sentence form of every cause reads as its golden text") {
  const std::string path = std::string(JOBVIZ_SOURCE_ROOT) + "/test/expected/cause_sentences.txt";
  const std::string text = EverySentenceForm();
  const char* update = std::getenv("JOBVIZ_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") std::ofstream(path, std::ios::binary) << text;
  std::ifstream file(path, std::ios::binary);
  REQUIRE(file.good());
  const std::string golden((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  // Line by line: a failure names the form that changed.
  std::istringstream want(golden), got(text);
  std::string want_line, got_line;
  int line = 0;
  while (std::getline(want, want_line)) {
    ++line;
    INFO("test/expected/cause_sentences.txt:" << line);
    REQUIRE(std::getline(got, got_line));
    CHECK(got_line == want_line);
  }
  CHECK_FALSE(std::getline(got, got_line));
  // No sentence ends without its figure, or says a step is cut twice.
  CHECK(text.find("each step cut") == std::string::npos);
  CHECK(text.find(" ()") == std::string::npos);
}

}  // namespace unit_cause_text_test
