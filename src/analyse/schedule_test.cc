#include "analyse/schedule.h"

#include <catch2/catch.hpp>

#include "analyse/analysis.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_schedule_test {

using namespace jobviz;

namespace {

// A job of a simulated schedule: its pass, micro-batch and chunk.
struct Planned {
  std::string type;
  int micro_batch = 0, chunk = 0;
};

// Runs each stage's job list in order, every job as soon as its stage is free
// and what it waits for has ended (no communication time): forward of chunk c
// on stage s waits for it on s - 1 (chunk c - 1 on the last stage for s = 0);
// backward waits for it on s + 1 (the last chunk's forward, or chunk c + 1's
// backward on stage 0, for the last stage); backward_w for its backward_b.
// Forward takes f / v, backward (b + w) / v, backward_b b, backward_w w.
Timeline Simulate(const std::vector<std::vector<Planned>>& plan, int chunks, Nanos f, Nanos b, Nanos w) {
  const int p = static_cast<int>(plan.size());
  std::map<std::tuple<std::string, int, int, int>, Nanos> ended;  // (pass, stage, mb, chunk)
  std::vector<size_t> next(plan.size(), 0);
  std::vector<Nanos> free_at(plan.size(), 0);
  Timeline t;
  t.machines.emplace_back("m");
  for (int s = 0; s < p; ++s) {
    Worker& worker = t.machines[0].workers.emplace_back();
    worker.index = s;
  }
  auto pass_of = [](const std::string& type) {
    const Pass pass = ClassifyJobType(type).pass;
    return pass == Pass::kForward ? "F" : pass == Pass::kBackwardWeight ? "W" : "B";
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (int s = 0; s < p; ++s) {
      if (next[s] == plan[s].size()) continue;
      const Planned& job = plan[s][next[s]];
      const std::string pass = pass_of(job.type);
      std::tuple<std::string, int, int, int> needs;
      bool waits = true;
      if (pass == "F") {
        if (s > 0) needs = {"F", s - 1, job.micro_batch, job.chunk};
        else if (job.chunk > 0) needs = {"F", p - 1, job.micro_batch, job.chunk - 1};
        else waits = false;
      } else if (pass == "W") {
        needs = {"B", s, job.micro_batch, job.chunk};
      } else if (s < p - 1) {
        needs = {"B", s + 1, job.micro_batch, job.chunk};
      } else if (job.chunk == chunks - 1) {
        needs = {"F", s, job.micro_batch, job.chunk};
      } else {
        needs = {"B", 0, job.micro_batch, job.chunk + 1};
      }
      if (waits && !ended.count(needs)) continue;
      const Nanos start = std::max(free_at[s], waits ? ended[needs] : 0);
      const Nanos length = job.type.rfind("backward_b", 0) == 0 ? b
                           : pass == "W"                      ? w
                           : pass == "F"                      ? f / chunks
                                                              : (b + w) / chunks;
      free_at[s] = start + length;
      ended[{pass, s, job.micro_batch, job.chunk}] = free_at[s];
      t.machines[0].workers[s].jobs.push_back(
          {std::to_string(next[s]), job.type, job.micro_batch, start, start + length, next[s] + 1, kNoStep});
      ++next[s];
      progress = true;
    }
  }
  for (int s = 0; s < p; ++s) REQUIRE(next[s] == plan[s].size());  // the plan cannot deadlock
  return t;
}

std::vector<std::vector<Planned>> FThenB(int p, int m) {
  std::vector<std::vector<Planned>> plan(p);
  for (auto& stage : plan) {
    for (int i = 0; i < m; ++i) stage.push_back({"forward", i});
    for (int i = 0; i < m; ++i) stage.push_back({"backward", i});
  }
  return plan;
}

// Paddle's 1F1B (warm-up p - s) and Eager1F1B (2 (p - s) - 1).
std::vector<std::vector<Planned>> OneForwardOneBackward(int p, int m, bool eager) {
  std::vector<std::vector<Planned>> plan(p);
  for (int s = 0; s < p; ++s) {
    const int warmup = std::min(m, eager ? 2 * (p - s) - 1 : p - s);
    int f = 0, b = 0;
    while (f < warmup) plan[s].push_back({"forward", f++});
    while (f < m) {
      plan[s].push_back({"backward", b++});
      plan[s].push_back({"forward", f++});
    }
    while (b < m) plan[s].push_back({"backward", b++});
  }
  return plan;
}

// Megatron's interleaved 1F1B: v chunks, micro-batches in groups of p.
std::vector<std::vector<Planned>> Interleaved(int p, int m, int v) {
  std::vector<std::vector<Planned>> plan(p);
  const int total = m * v;
  auto mb = [&](int k) { return (k / (p * v)) * p + k % p; };
  for (int s = 0; s < p; ++s) {
    const int warmup = std::min(total, (p - s - 1) * 2 + (v - 1) * p);
    int f = 0, b = 0;
    auto forward = [&] { plan[s].push_back({"forward" + std::to_string((f / p) % v), mb(f), (f / p) % v}), ++f; };
    auto backward = [&] {
      const int chunk = v - 1 - (b / p) % v;
      plan[s].push_back({"backward" + std::to_string(chunk), mb(b), chunk}), ++b;
    };
    while (f < warmup) forward();
    while (f < total) forward(), backward();
    while (b < total) backward();
  }
  return plan;
}

// Paddle's ZB-H1: warm-up p - s forwards, s backward_b/forward pairs, then
// backward/forward, the last backward split, and s backward_w at the end.
std::vector<std::vector<Planned>> ZeroBubbleH1(int p, int m) {
  std::vector<std::vector<Planned>> plan(p);
  for (int s = 0; s < p; ++s) {
    int f = 0, b = 0;
    while (f < p - s) plan[s].push_back({"forward", f++});
    for (int i = 0; i < s; ++i) plan[s].push_back({"backward_b", b++}), plan[s].push_back({"forward", f++});
    while (f < m) plan[s].push_back({"backward", b++}), plan[s].push_back({"forward", f++});
    while (b < m - 1) plan[s].push_back({"backward", b++});
    if (s > 0) plan[s].push_back({"backward_b", b}), plan[s].push_back({"backward_w", b});
    else plan[s].push_back({"backward", b});
    for (int i = 0; i < s; ++i) plan[s].push_back({"backward_w", i});
  }
  return plan;
}

constexpr Nanos kF = 1000, kB = 1200, kW = 800;

}  // namespace

TEST_CASE("Job types of the framework's schedulers") {
  CHECK(ClassifyJobType("forward").pass == Pass::kForward);
  CHECK(ClassifyJobType("forward1").chunk == 1);
  CHECK(ClassifyJobType("backward0").pass == Pass::kBackward);
  CHECK(ClassifyJobType("backward_b").pass == Pass::kBackwardInput);
  CHECK(ClassifyJobType("backward_w0").pass == Pass::kBackwardWeight);
  CHECK(ClassifyJobType("backward_w0").chunk == 0);
  for (const char* other : {"optimizer", "lr", "default", "recv_forward", "send_backward", "backward_w0_reduce", "forwardx"})
    CHECK(ClassifyJobType(other).pass == Pass::kOther);
}

TEST_CASE("FThenB, 1F1B and Eager1F1B are told apart by order, and their ideal is what they measure when ideal") {
  struct Case {
    const char* name;
    std::vector<std::vector<Planned>> plan;
  };
  for (const Case& c : {Case{"FThenB", FThenB(4, 8)}, Case{"1F1B", OneForwardOneBackward(4, 8, false)},
                        Case{"Eager1F1B", OneForwardOneBackward(4, 8, true)}}) {
    INFO(c.name);
    const Analysis a = Analyze(Simulate(c.plan, 1, kF, kB + kW, 0));
    CHECK(a.schedule.name == c.name);
    CHECK(a.stages == 4);
    CHECK(a.micro_batches == 8);
    REQUIRE(a.schedule.ideal_bubble);
    CHECK(*a.schedule.ideal_bubble == Approx(3.0 / 11.0));
    CHECK(a.bubble_ratio == Approx(*a.schedule.ideal_bubble));
  }
}

TEST_CASE("Interleaved 1F1B: v chunks from the job types, ideal (p - 1) / (v m + p - 1), as simulated") {
  for (int v : {2, 3}) {
    INFO(v);
    const Analysis a = Analyze(Simulate(Interleaved(4, 8, v), v, 3 * kF, 3 * kB, 0));
    CHECK(a.schedule.name == "interleaved 1F1B");
    CHECK(a.schedule.chunks == v);
    REQUIRE(a.schedule.ideal_bubble);
    CHECK(*a.schedule.ideal_bubble == Approx(3.0 / (8.0 * v + 3.0)));
    CHECK(a.bubble_ratio == Approx(*a.schedule.ideal_bubble));
  }
}

TEST_CASE("ZB-H1: the bubble of Qi et al. from the measured pass times") {
  const Analysis a = Analyze(Simulate(ZeroBubbleH1(4, 8), 1, kF, kB, kW));
  CHECK(a.schedule.name == "ZB-H1");
  REQUIRE(a.schedule.ideal_bubble);
  const double f = kF / 1000.0, b = kB / 1000.0, w = kW / 1000.0, bubble = 3 * (f + b - w);
  CHECK(*a.schedule.ideal_bubble == Approx(bubble / (8 * (f + b + w) + bubble)));
  CHECK(*a.schedule.ideal_bubble < 3.0 / 11.0);  // below 1F1B's
}

TEST_CASE("ZB-V names its schedule and says that no ideal is known") {
  Timeline t = Simulate(Interleaved(2, 4, 2), 2, kF, kB, 0);
  for (Job& job : t.machines[0].workers[0].jobs)
    if (job.type.str().starts_with("backward")) job.type = "backward_b" + job.type.str().substr(8);
  const Analysis a = Analyze(t);
  CHECK(a.schedule.name == "ZB-V");
  CHECK_FALSE(a.schedule.ideal_bubble);
  CHECK(a.schedule.note.find("no closed form") != std::string::npos);
}

TEST_CASE("An order that matches no schedule gives no ideal, not a wrong one") {
  // Forward, backward, forward, ... on every stage: one forward before the
  // first backward, which only the last stage of 1F1B or Eager1F1B does.
  std::vector<std::vector<Planned>> plan(4);
  for (auto& stage : plan)
    for (int i = 0; i < 8; ++i) stage.push_back({"forward", i}), stage.push_back({"backward", i});
  const Analysis a = Analyze(Simulate(plan, 1, kF, kB, 0));
  CHECK(a.schedule.kind == ScheduleKind::kUnknown);
  CHECK_FALSE(a.schedule.ideal_bubble);
}

}  // namespace unit_schedule_test
