#include "analyse/analysis.h"

#include <catch2/catch.hpp>

#include "analyse/fail_on.h"
#include "analyse/summary.h"
#include "analyse/summary_diff.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_analysis_test {

using namespace jobviz;

namespace {

constexpr Nanos kUs = 1000;

Job J(const std::string& type, std::int64_t mb, Nanos start_us, Nanos end_us, std::int64_t step) {
  return Job{"0", type, mb, start_us * kUs, end_us * kUs, 1, step};
}

// Two workers, two steps (hand-computed below).
//  step 1: worker 0 jobs [0,10) [20,30)    worker 1 jobs [5,15) [10,25) (overlap)   window [0,30)
//  step 2: worker 0 jobs [40,50)           worker 1 none                             window [40,50)
Timeline Fixture() {
  Timeline t;
  t.machines.emplace_back("m");
  Worker w0, w1;
  w0.index = 0;
  w1.index = 1;
  w0.jobs = {J("forward", 0, 0, 10, 1), J("backward", 0, 20, 30, 1), J("forward", 0, 40, 50, 2)};
  w1.jobs = {J("forward", 0, 5, 15, 1), J("forward", 1, 10, 25, 1)};
  t.machines[0].workers = {w0, w1};
  return t;
}

}  // namespace

TEST_CASE("Union of intervals") {
  CHECK(UnionLength({}) == 0);
  CHECK(UnionLength({{0, 10}, {5, 15}, {20, 25}}) == 20);
  CHECK(UnionLength({{0, 10}, {2, 3}}) == 10);
  CHECK(UnionLength({{5, 5}}) == 0);
}

TEST_CASE("A worker's busy time in a step is the union of its jobs of that step clipped to the window, however they overlap") {
  // Random jobs of four steps on four workers, in start order as the model
  // keeps them, with overlaps, and jobs reaching past their step's window
  // (the windows are clipped so that steps do not overlap); step 3 has no
  // span of its own: its window is its jobs'.
  std::uint64_t state = 42;
  const auto next = [&](int n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((state >> 33) % static_cast<std::uint64_t>(n));
  };
  Timeline t;
  t.machines.emplace_back("m");
  for (int w = 0; w < 4; ++w) {
    Worker worker;
    worker.index = w;
    for (int k = 0; k < 60; ++k) {
      const std::int64_t step = next(4);
      const Nanos start = step * 100 + next(110) - 5;
      worker.jobs.push_back(J("forward", k, start, start + next(30), step));
    }
    std::sort(worker.jobs.begin(), worker.jobs.end(), StartsBefore);
    t.machines[0].workers.push_back(worker);
  }
  for (std::int64_t step = 0; step < 3; ++step) t.steps.push_back({step, step * 100 * kUs, (step * 100 + 100) * kUs});
  const Analysis a = Analyze(t, 2);
  REQUIRE(a.steps.size() == 4);
  for (size_t w = 0; w < 4; ++w)
    for (size_t s = 0; s < 4; ++s) {
      const StepWindow& window = a.steps[s];
      std::vector<std::pair<Nanos, Nanos>> inside;
      for (const Job& job : t.machines[0].workers[w].jobs)
        if (job.step == window.step) inside.emplace_back(std::max(job.start, window.start), std::min(job.end, window.end));
      INFO("worker " << w << " step " << s);
      CHECK(a.workers[w].steps[s].busy == UnionLength(inside));
      CHECK(a.workers[w].steps[s].idle == window.duration() - UnionLength(inside));
    }
}

TEST_CASE("Nearest-rank percentiles") {
  const std::vector<Nanos> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  CHECK(Percentile(v, 50) == 5);
  CHECK(Percentile(v, 95) == 10);
  CHECK(Percentile(v, 0) == 1);
  CHECK(Percentile(std::vector<Nanos>{}, 50) == 0);
}

TEST_CASE("Percentiles of unsorted values equal those of the sorted ones") {
  std::vector<Nanos> values;
  for (int i = 0; i < 1001; ++i) values.push_back((i * 7919) % 1009);  // distinct, shuffled
  std::vector<Nanos> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (double p : {0.0, 1.0, 50.0, 95.0, 99.9, 100.0}) {
    std::vector<Nanos> copy = values;
    CHECK(PercentileOf(copy, p) == Percentile(sorted, p));
  }
  std::vector<Nanos> none;
  CHECK(PercentileOf(none, 50) == 0);
}

TEST_CASE("Two percentiles at once equal each taken alone, with ties and at any size") {
  for (int size : {1, 2, 3, 19, 20, 21, 1000}) {
    std::vector<Nanos> values;
    for (int i = 0; i < size; ++i) values.push_back((i * 7919) % 37);  // many ties, shuffled
    std::vector<Nanos> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    for (const auto& [low, high] : {std::pair{50.0, 95.0}, std::pair{0.0, 100.0}, std::pair{95.0, 95.0}, std::pair{1.0, 99.0}}) {
      INFO("size " << size << ", p" << low << " and p" << high);
      std::vector<Nanos> copy = values;
      const auto [at_low, at_high] = PercentilesOf(copy, low, high);
      CHECK(at_low == Percentile(sorted, low));
      CHECK(at_high == Percentile(sorted, high));
    }
  }
  std::vector<Nanos> none;
  CHECK(PercentilesOf(none, 50, 95) == std::pair<Nanos, Nanos>{0, 0});
}

TEST_CASE("Step windows, busy and idle time with gaps, overlaps and a worker without jobs in a step") {
  const Analysis a = Analyze(Fixture());
  REQUIRE(a.steps.size() == 2);
  CHECK(a.steps[0].start == 0);
  CHECK(a.steps[0].end == 30 * kUs);
  CHECK(a.steps[1].duration() == 10 * kUs);
  REQUIRE(a.workers.size() == 2);
  // worker 0: step 1 busy 20 of 30 (gap inside the step), step 2 busy 10 of 10.
  CHECK(a.workers[0].steps[0].busy == 20 * kUs);
  CHECK(a.workers[0].steps[0].idle == 10 * kUs);
  CHECK(a.workers[0].idle == 10 * kUs);
  CHECK(a.workers[0].bubble_ratio == Approx(10.0 / 40.0));
  // worker 1: step 1 busy [5,25) = 20 (overlapping jobs count once), step 2 no jobs: idle 10.
  CHECK(a.workers[1].steps[0].busy == 20 * kUs);
  CHECK(a.workers[1].steps[1].busy == 0);
  CHECK(a.workers[1].steps[1].idle == 10 * kUs);
  CHECK(a.workers[1].bubble_ratio == Approx(20.0 / 40.0));
  CHECK(a.bubble_ratio == Approx(30.0 / 80.0));
}

TEST_CASE("Step windows are the steps the traces draw, and a job is busy only inside its step's window") {
  Timeline t = Fixture();
  // NVTX: step 1 pushed 2 us before its first job and popped at 35; step 2
  // (job order, clipped) starts at 45, after a job of it began at 40.
  t.steps = {{1, -2 * kUs, 35 * kUs}, {2, 45 * kUs, 50 * kUs}};
  const Analysis a = Analyze(t);
  REQUIRE(a.steps.size() == 2);
  CHECK(a.steps[0].start == -2 * kUs);
  CHECK(a.steps[0].end == 35 * kUs);
  CHECK(a.steps[1].start == 45 * kUs);
  const WorkerAnalysis& w0 = a.workers[0];
  CHECK(w0.steps[0].busy == 20 * kUs);
  CHECK(w0.steps[0].idle == 17 * kUs);
  CHECK(w0.steps[1].busy == 5 * kUs);  // [40,50) inside [45,50)
  CHECK(w0.steps[1].idle == 0);
  for (const WorkerAnalysis& w : a.workers) CHECK(w.busy + w.idle == 37 * kUs + 5 * kUs);
}

TEST_CASE("Job types and ideal bubble") {
  const Analysis a = Analyze(Fixture());
  const TypeAnalysis& f = a.job_types.at("forward");
  CHECK(f.count == 4);
  CHECK(f.total == 45 * kUs);
  CHECK(f.p50 == 10 * kUs);
  CHECK(f.p95 == 15 * kUs);
  CHECK(a.stages == 2);
  CHECK(a.micro_batches == 2);
  CHECK(a.schedule.name == "FThenB");  // one step with both passes, its forward first
  REQUIRE(a.schedule.ideal_bubble);
  CHECK(*a.schedule.ideal_bubble == Approx(1.0 / 3.0));
  // Two stages, each its own worker: nothing to compare a worker with.
  CHECK(a.slow_workers.empty());
  CHECK(a.bottleneck.per_worker_only);
}

TEST_CASE("Without steps the whole run is one window") {
  Timeline t = Fixture();
  for (Worker& w : t.machines[0].workers)
    for (Job& j : w.jobs) j.step = kNoStep;
  const Analysis a = Analyze(t);
  REQUIRE(a.steps.size() == 1);
  CHECK(a.steps[0].step == kNoStep);
  CHECK(a.steps[0].duration() == 50 * kUs);
  CHECK(a.bottleneck.steps == 1);
}

TEST_CASE("--fail-on conditions: parsing, metric paths and aggregates") {
  const nlohmann::json summary = SummaryJson(Analyze(Fixture()), Fixture(), RunCounts{2, 10, 5, 1});
  std::string error;
  auto c = ParseCondition("bubble_ratio>0.35", &error);
  REQUIRE(c);
  CHECK(c->path == "bubble_ratio");
  CHECK(c->op == ">");
  CHECK(Holds(*c, *ResolveMetric(summary, c->path, &error), c->threshold));
  c = ParseCondition("steps.duration_us.p95 >= 30", &error);
  REQUIRE(c);
  CHECK(*ResolveMetric(summary, c->path, &error) == Approx(30.0));
  CHECK(*ResolveMetric(summary, "workers.bubble_ratio.max", &error) == Approx(0.5));
  CHECK(*ResolveMetric(summary, "job_types.forward.count", &error) == 4);
  CHECK(*ResolveMetric(summary, "counts.skipped", &error) == 1);
  CHECK(*ResolveMetric(summary, "steps.step.count", &error) == 2);
  CHECK_FALSE(ResolveMetric(summary, "no_such_key", &error));
  CHECK(error.find("no 'no_such_key'") != std::string::npos);
  CHECK_FALSE(ResolveMetric(summary, "steps.duration_us.p42", &error));
  CHECK(*ResolveMetric(summary, "steps", &error) == 2);  // a list alone: how many it holds
  CHECK_FALSE(ParseCondition("bubble_ratio", &error));
  CHECK_FALSE(ParseCondition("bubble_ratio>x", &error));
  CHECK_FALSE(ParseCondition(">3", &error));
  CHECK(Holds(*ParseCondition("a<=2", &error), 2, 2));
  CHECK_FALSE(Holds(*ParseCondition("a!=2", &error), 2, 2));
  for (const char* never : {"a>nan", "a<inf", "a>-inf", "a==NAN"}) {
    INFO(never);
    CHECK_FALSE(ParseCondition(never, &error));
  }
}

TEST_CASE("--fail-on metric names are checked against the summary's schema, before any log") {
  const nlohmann::json& schema = SummarySchema();
  std::string error;
  // Every path that resolves on a real summary passes the schema check.
  for (const char* good : {"bubble_ratio", "ideal_bubble_ratio", "stages", "micro_batches", "counts.skipped",
                           "steps.duration_us.p95", "workers.bubble_ratio.max", "slow_workers", "slow_workers.factor.max", "what_if.balanced_stages.gain",
                           "bottleneck.critical_path.hand_off_us", "bottleneck.replay_error",
                           "clock.offset_us.max", "job_types.forward.mean_us", "job_types.anything.p95_us"}) {
    INFO(good);
    CHECK(CheckMetricPath(schema, good, &error));
  }
  CHECK_FALSE(CheckMetricPath(schema, "steps.length.p95", &error));
  CHECK(error == "'steps.length.p95': the summary's array has no number 'length' (there: bubble_ratio, duration_us, end_ns, end_us, start_ns, start_us, step)");
  CHECK_FALSE(CheckMetricPath(schema, "bubble_rati", &error));
  CHECK(error.find("no 'bubble_rati' in the summary (there: bottleneck, bubble_ratio,") != std::string::npos);
  CHECK_FALSE(CheckMetricPath(schema, "workers.name.max", &error));  // names are not numbers
  CHECK_FALSE(CheckMetricPath(schema, "steps.duration_us.p42", &error));
  CHECK(CheckMetricPath(schema, "steps", &error));  // its length
  CHECK_FALSE(CheckMetricPath(schema, "job_types.forward.median_us", &error));
  CHECK_FALSE(CheckMetricPath(schema, "bubble_ratio.max", &error));
}

TEST_CASE("--fail-on against a baseline: + - * or the baseline itself, with both values in the message") {
  const nlohmann::json baseline = {{"bubble_ratio", 0.40}, {"steps", {{{"duration_us", 100.0}}, {{"duration_us", 200.0}}}}};
  const nlohmann::json now = {{"bubble_ratio", 0.43}, {"steps", {{{"duration_us", 110.0}}, {{"duration_us", 230.0}}}}};
  std::string error;
  const auto plus = ParseCondition("bubble_ratio > baseline + 0.02", &error);
  REQUIRE(plus);
  CHECK(plus->base == Condition::Base::kPlus);
  CHECK(*Threshold(*plus, &baseline, &error) == Approx(0.42));
  const auto times = ParseCondition("steps.duration_us.p50 > baseline * 1.2", &error);
  REQUIRE(times);
  const auto same = ParseCondition("bubble_ratio<=baseline", &error);
  REQUIRE(same);
  const auto results = EvaluateGates({*plus, *times, *same}, now, &baseline);
  CHECK(results[0].failed);  // 0.43 > 0.42
  CHECK(results[0].Message() == "bubble_ratio is 43.0% (baseline 40.0%, threshold 42.0%)");  // in the tables' units
  CHECK_FALSE(results[1].failed);  // p50 110 against the baseline's p50 100 * 1.2
  CHECK(results[1].Message() == "steps.duration_us.p50 is 110.0 us (baseline 100.0 us, threshold 120.0 us)");
  CHECK(GatesVerdict(results) == "Gates: 1 of 3 failed");
  CHECK(results[1].value == Approx(110));
  CHECK(results[1].threshold == Approx(120));
  CHECK_FALSE(results[2].failed);
  // Without a baseline a relative condition cannot be checked.
  CHECK_FALSE(Threshold(*plus, nullptr, &error));
  CHECK(error.find("--baseline") != std::string::npos);
  for (const char* bad : {"bubble_ratio > baseline ^ 2", "bubble_ratio > baseline +", "bubble_ratio > baseline * x"}) {
    INFO(bad);
    CHECK_FALSE(ParseCondition(bad, &error));
  }
}

TEST_CASE("The analysis does not depend on the number of threads") {
  // 3 machines x 4 workers, 3 steps, jobs of several types; worker 2 of each
  // machine lags (a straggler), one worker has no jobs.
  Timeline t;
  for (int m = 0; m < 3; ++m) {
    t.machines.emplace_back("m" + std::to_string(m));
    for (int w = 0; w < 4; ++w) {
      Worker worker;
      worker.machine = m;
      worker.index = w;
      if (m != 1 || w != 3)
        for (std::int64_t step = 0; step < 3; ++step)
          for (std::int64_t mb = 0; mb < 5; ++mb) {
            const Nanos base = step * 1000 + mb * 60 + w * 7 + m * 3 + (w == 2 ? 40 : 0);
            worker.jobs.push_back(J(mb % 2 ? "forward" : "forward_v", mb, base, base + 25 + mb, step));
            worker.jobs.push_back(J("backward", mb, base + 30, base + 55 + w, step));
          }
      std::sort(worker.jobs.begin(), worker.jobs.end(), StartsBefore);
      t.machines[m].workers.push_back(worker);
    }
  }
  const RunCounts counts{12, 400, 330, 0};
  const nlohmann::json one = SummaryJson(Analyze(t, 1), t, counts);
  const Analysis parallel = Analyze(t, 4);
  CHECK(SummaryJson(parallel, t, counts) == one);
  CHECK(parallel.stages == 11);
  CHECK(parallel.micro_batches == 5);
  CHECK(parallel.job_types.size() == 3);
  CHECK(parallel.bottleneck.steps == 3);
  CHECK(parallel.workers[7].name == "m1 worker 3");
}

TEST_CASE("Elements named in brackets: workers by name, stages by number, in gates, the schema and the diff") {
  Timeline t = Fixture();
  t.machines[0].name = "machine.0";  // a dot inside the brackets is part of the name
  t.topology.source = TopologySource::kOption;
  t.topology.degrees[static_cast<size_t>(ParallelAxis::kPp)] = 2;
  t.machines[0].workers[0].role = {0, 0, 0, 0};
  t.machines[0].workers[1].role = {1, 1, 0, 0};
  const nlohmann::json summary = SummaryJson(Analyze(t), t, RunCounts{});
  std::string error;
  CHECK(*ResolveMetric(summary, "workers[machine.0 worker 1].bubble_ratio", &error) == Approx(0.5));
  CHECK(*ResolveMetric(summary, "stage_table[1].bubble_ratio", &error) == Approx(0.5));
  CHECK(*ResolveMetric(summary, "stage_table[0].workers", &error) == 1);
  CHECK(*ResolveMetric(summary, "stage_table.bubble_ratio.max", &error) == Approx(0.5));
  CHECK_FALSE(ResolveMetric(summary, "stage_table[7].bubble_ratio", &error));
  CHECK(error.find("no element '7' in 'stage_table'") != std::string::npos);
  CHECK_FALSE(ResolveMetric(summary, "steps[x].duration_us", &error));
  CHECK_FALSE(ResolveMetric(summary, "bubble_ratio[1]", &error));
  const nlohmann::json& schema = SummarySchema();
  for (const char* good : {"workers[anything].bubble_ratio", "stage_table[3].bubble_ratio", "lagging_peers.behind_us.count",
                           "last_replicas.late_by_us.max", "topology.replicas", "topology.degrees.pp"}) {
    INFO(good);
    CHECK(CheckMetricPath(schema, good, &error));
  }
  // Every metric the diff prints is a gate that resolves.
  const auto rows = DiffSummaries(summary, summary);
  bool stage_rows = false;
  for (const MetricChange& row : rows) {
    INFO(row.metric);
    CHECK(CheckMetricPath(schema, row.metric, &error));
    CHECK(ResolveMetric(summary, row.metric, &error).has_value() == row.now.has_value());
    stage_rows |= row.metric == "stage_table[1].backward_mean_us";
  }
  CHECK(stage_rows);
}

TEST_CASE("Workers are picked by name only, and every name, however odd, is a gate the diff and --fail-on agree on") {
  for (const std::string machine : {"machine0].x", "machine1[y", "back\\slash", "a>b=c"}) {
    INFO(machine);
    Timeline t = Fixture();
    t.machines[0].name = machine;
    t.topology.source = TopologySource::kOption;
    t.topology.degrees[static_cast<size_t>(ParallelAxis::kPp)] = 2;
    t.machines[0].workers[0].role = {0, 1, 0, 0};  // worker 0 sits at stage 1
    t.machines[0].workers[1].role = {1, 0, 0, 0};
    const nlohmann::json summary = SummaryJson(Analyze(t), t, RunCounts{});
    std::string error;
    // workers[1] is no worker's name: not the worker at stage 1, nor the one at index 1.
    CHECK_FALSE(ResolveMetric(summary, "workers[1].bubble_ratio", &error));
    CHECK_FALSE(ResolveMetric(summary, "workers[0].bubble_ratio", &error));
    const std::string name = summary["workers"][1]["name"].get<std::string>();
    const std::string path = "workers[" + GateKey(name) + "].bubble_ratio";
    const auto condition = ParseCondition(path + " > 0.9", &error);
    REQUIRE(condition);
    CHECK(condition->path == path);
    CHECK(condition->op == ">");
    CHECK(CheckMetricPath(SummarySchema(), path, &error));
    REQUIRE(ResolveMetric(summary, path, &error).has_value());
    CHECK(*ResolveMetric(summary, path, &error) == summary["workers"][1]["bubble_ratio"].get<double>());
    // The diff prints the same key, and it resolves.
    bool found = false;
    for (const MetricChange& row : DiffSummaries(summary, summary)) {
      if (row.metric.rfind("workers[", 0) != 0) continue;
      CHECK(ResolveMetric(summary, row.metric, &error).has_value());
      found |= row.metric == path;
    }
    CHECK(found);
  }
}

TEST_CASE("The diff ranks changes by significance and says worse or better only where the direction is known") {
  // The new run: steps 20% slower because machine0 worker 1 got slow; that
  // worker idles less (its own bubble drops), the run's bubble rises.
  const nlohmann::json base = {
      {"bubble_ratio", 0.30}, {"steps", {{"duration_us", {{"p50", 1000.0}, {"p95", 1100.0}}}}},
      {"slow_workers", nlohmann::json::array()}, {"counts", {{"jobs", 100}, {"skipped", 0}}},
      {"workers", {{{"name", "logs worker 0"}, {"machine", 0}, {"worker", 0}, {"bubble_ratio", 0.30}},
                   {{"name", "logs worker 1"}, {"machine", 0}, {"worker", 1}, {"bubble_ratio", 0.30}}}}};
  nlohmann::json now = base;
  now["bubble_ratio"] = 0.42;
  now["steps"]["duration_us"] = {{"p50", 1200.0}, {"p95", 1105.0}};
  now["workers"][1]["bubble_ratio"] = 0.05;
  now["workers"][0]["name"] = "run2 worker 0";  // another directory: matched by index, named as the new run names it
  const std::vector<MetricChange> rows = DiffSummaries(base, now);
  std::map<std::string, const MetricChange*> by_name;
  for (const MetricChange& row : rows) by_name[row.metric] = &row;
  REQUIRE(by_name.count("workers[logs worker 1].bubble_ratio"));
  REQUIRE(by_name.count("workers[run2 worker 0].bubble_ratio"));
  CHECK(by_name["bubble_ratio"]->verdict() == Verdict::kWorse);
  CHECK(by_name["bubble_ratio"]->unit == MetricUnit::kRatio);
  CHECK(by_name["steps.duration_us.p50"]->verdict() == Verdict::kWorse);
  CHECK(by_name["steps.duration_us.p50"]->unit == MetricUnit::kMicros);
  CHECK(by_name["steps.duration_us.p95"]->verdict() == Verdict::kSame);  // +0.45%: under 1%
  // A lower bubble on the slow worker is not an improvement: no verdict.
  CHECK(by_name["workers[logs worker 1].bubble_ratio"]->verdict() == Verdict::kNone);
  CHECK(by_name["counts.jobs"]->verdict() == Verdict::kNone);
  // Ranked by effect on the step: the p50's +20%, the run's +12 points; a
  // worker's own bubble says nothing of the step on its own.
  CHECK(rows[0].metric == "steps.duration_us.p50");
  CHECK(rows[1].metric == "bubble_ratio");
  for (size_t i = 1; i < rows.size(); ++i) CHECK(rows[i - 1].effect >= rows[i].effect);
}

TEST_CASE("The diff opens with one verdict line and ranks a small change that is large in percent below a slower step") {
  const nlohmann::json base = {
      {"steps", {{"duration_us", {{"p50", 30000.0}}}, {"step", 0}}}, {"micro_batches", 8},
      {"bottleneck", {{"critical_path", {{"stall_us", 5.3}}}}},
      {"stage_table", {{{"stage", 2}, {"backward_mean_us", 2000.0}, {"forward_mean_us", 1000.0}}}}};
  nlohmann::json now = base;
  now["steps"]["duration_us"]["p50"] = 35000.0;
  now["bottleneck"]["critical_path"]["stall_us"] = 52.3;  // +887%, 47 us
  now["stage_table"][0]["backward_mean_us"] = 2600.0;     // +30%: 8 x 600 us a step
  const std::vector<MetricChange> rows = DiffSummaries(base, now);
  std::vector<std::string> order;
  for (const MetricChange& row : rows) order.push_back(row.metric);
  INFO(nlohmann::json(order).dump());
  const auto at = [&](const std::string& metric) { return std::find(order.begin(), order.end(), metric) - order.begin(); };
  CHECK(at("steps.duration_us.p50") < at("bottleneck.critical_path.stall_us"));
  CHECK(at("stage_table[2].backward_mean_us") < at("bottleneck.critical_path.stall_us"));
  CHECK(DiffVerdict(rows) == "step time +16.7% (30.00 ms -> 35.00 ms): stage 2 backward +30.0%");
}

}  // namespace unit_analysis_test
