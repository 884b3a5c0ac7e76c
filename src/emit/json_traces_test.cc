#include "emit/chrome_json.h"
#include "write/json_text.h"
#include "emit/perfetto_json.h"

#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>
#include <nlohmann/json.hpp>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_json_traces_test {

using namespace jobviz;
using nlohmann::json;

namespace {

Job MakeJob(const std::string& type, const std::string& id, Nanos start, Nanos end, std::int64_t step = 5) {
  return Job{id, type, 2, start, end, 40, step};
}

// Two machines with workers 2 and 3 each, as --devices 2,3 gives.
Timeline SampleTimeline() {
  Timeline t;
  for (int m = 0; m < 2; ++m) {
    Machine machine("machine" + std::to_string(m == 0 ? 0 : 10));
    for (int w : {2, 3}) {
      Worker worker;
      worker.machine = m;
      worker.index = w;
      worker.file = machine.name + "/workerlog." + std::to_string(w);
      worker.jobs = {MakeJob("forward", "3", 1697793307213760986, 1697793307254006104),
                     MakeJob("backward", "4", 1697793307254006104, 1697793307300000000)};
      machine.workers.push_back(worker);
    }
    t.machines.push_back(machine);
  }
  t.steps = {{5, 1697793307213760986, 1697793307300000000}};
  t.step_source = StepSource::kNvtx;
  return t;
}

std::map<std::pair<int, int>, std::string> ThreadNames(const json& trace) {
  std::map<std::pair<int, int>, std::string> names;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name") names[{e["pid"], e["tid"]}] = e["args"]["name"];
  return names;
}

}  // namespace

TEST_CASE("Lanes: overlapping jobs of one worker go to extra rows") {
  const std::vector<Job> jobs = {MakeJob("f", "0", 0, 10), MakeJob("f", "1", 5, 8), MakeJob("f", "2", 6, 12),
                                 MakeJob("f", "3", 10, 11), MakeJob("f", "4", 12, 13)};
  int count = 0;
  const std::vector<int> lanes = AssignLanes(jobs, &count);
  CHECK(lanes == std::vector<int>{0, 1, 2, 0, 0});
  CHECK(count == 3);
  CHECK(AssignLanes({}, &count).empty());
  CHECK(count == 1);
}

TEST_CASE("Rows: a worker's jobs get lanes only where one overlaps the job before, and the row ids run on") {
  Timeline t = SampleTimeline();
  // machine0 worker 3: its second job starts 1 ns before its first ends.
  t.machines[0].workers[1].jobs[1].start = t.machines[0].workers[1].jobs[0].end - 1;
  // machine10 worker 2: back to back to the nanosecond, no overlap.
  for (int threads : {1, 3}) {
    const std::vector<RowGroup> groups = LayOutRows(t, threads);
    REQUIRE(groups.size() == 2);
    const WorkerRows &plain = groups[0].rows[0], &overlapping = groups[0].rows[1], &after = groups[1].rows[0];
    CHECK(plain.lanes.empty());  // no per-job vector where every job is on lane 0
    CHECK(plain.lane_count == 1);
    CHECK((plain.Tid(0) == plain.first_tid && plain.Tid(1) == plain.first_tid));
    CHECK(overlapping.lanes == std::vector<int>{0, 1});
    CHECK(overlapping.lane_count == 2);
    CHECK(overlapping.Tid(1) == overlapping.first_tid + 1);
    CHECK(overlapping.first_tid == plain.first_tid + 1);
    CHECK(after.first_tid == overlapping.first_tid + 2);  // after both of its rows
    CHECK(after.lanes.empty());
  }
}

TEST_CASE("Perfetto trace: valid JSON, named processes and threads, worker indices not loop indices") {
  const Timeline t = SampleTimeline();
  const json trace = json::parse(TraceText(WritePerfettoTrace, t));
  const auto names = ThreadNames(trace);
  std::vector<std::string> thread_names;
  for (const auto& [id, name] : names) thread_names.push_back(name);
  CHECK(thread_names == std::vector<std::string>{"Step", "machine0 worker 2", "machine0 worker 3",
                                                 "machine10 worker 2", "machine10 worker 3"});
  std::map<int, std::string> processes;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
  CHECK(processes == std::map<int, std::string>{{1, "Steps"}, {2, "machine0"}, {3, "machine10"}});
}

bool IsJob(const json& e) { return e["ph"] == "X" && e["args"].contains("source"); }

TEST_CASE("Perfetto trace: complete events with exact microseconds and the job args") {
  const Timeline t = SampleTimeline();
  const std::string text = TraceText(WritePerfettoTraceFullArgs, t);
  // Relative to the whole second before the earliest time (exact in a double).
  CHECK(text.find("\"ts\":213760.986,\"dur\":40245.118") != std::string::npos);
  const json trace = json::parse(text);
  CHECK(trace["metadata"]["trace_origin_ns"] == 1697793307000000000);
  CHECK(trace["metadata"]["trace_origin_utc"] == "2023-10-20T09:15:07Z");
  CHECK_FALSE(trace.contains("displayTimeUnit"));  // some trace processors took "ms" there as the unit of "ts"
  int jobs = 0;
  for (const json& e : trace["traceEvents"]) {
    if (!IsJob(e)) continue;
    ++jobs;
    CHECK(e["args"]["machine"].is_number_integer());
    CHECK(e["args"]["worker"].is_number_integer());
    CHECK(e["args"]["micro_batch"] == 2);
    CHECK(e["args"]["step"] == 5);
    // Named by type and micro-batch (as the HTML labels it); the job id is an arg.
    CHECK(e["name"] == std::string(e["args"]["type"]) + " " + std::to_string(e["args"]["micro_batch"].get<int>()));
    CHECK(e["args"]["job_id"].is_string());
    CHECK(e["cat"] == e["args"]["type"]);
  }
  CHECK(jobs == 8);
  json last;
  for (const json& e : trace["traceEvents"])
    if (IsJob(e)) last = e;
  CHECK(last["args"]["machine"] == 1);
  CHECK(last["args"]["worker"] == 3);
  CHECK(last["args"]["source"] == "machine10/workerlog.3:40");
}

TEST_CASE("Perfetto trace: compact args are the ones neither the slice's name nor its row shows") {
  Timeline t = SampleTimeline();
  t.machines[1].workers[1].jobs[1].step = StepKey(2, 5);  // a job of the second run appended to a log
  const json trace = json::parse(TraceText(WritePerfettoTrace, t));
  std::vector<json> args;
  for (const json& e : trace["traceEvents"])
    if (IsJob(e)) {
      CHECK_FALSE(e.contains("cat"));  // the type is in the name
      args.push_back(e["args"]);
    }
  REQUIRE(args.size() == 8);
  // Not the micro-batch: the name ends with it ("forward 2").
  CHECK(args.front() == json{{"job_id", "3"}, {"source", "machine0/workerlog.2:40"}});
  CHECK(args.back() == json{{"job_id", "4"}, {"run", 2}, {"source", "machine10/workerlog.3:40"}});
  // The full args add what the row and the name show; the compact ones are those of the full.
  const json full = json::parse(TraceText(WritePerfettoTraceFullArgs, t));
  size_t i = 0;
  for (const json& e : full["traceEvents"])
    if (IsJob(e)) {
      for (const auto& [key, value] : args.at(i).items()) CHECK(e["args"][key] == value);
      CHECK(e["args"].size() == args.at(i).size() + 5);  // machine, worker, type, micro_batch, step
      ++i;
    }
}

TEST_CASE("Sources are relative to the directory all logs share, which the metadata names") {
  Timeline t = SampleTimeline();
  CHECK(SourceRoot(t) == "");  // machine0/... and machine10/... share no directory
  for (Machine& machine : t.machines)
    for (Worker& worker : machine.workers) worker.file = "/data/run \"7\"/" + worker.file;
  CHECK(SourceRoot(t) == "/data/run \"7\"/");
  const json trace = json::parse(TraceText(WritePerfettoTrace, t));
  CHECK(trace["metadata"]["source_root"] == "/data/run \"7\"/");
  std::vector<std::string> sources;
  for (const json& e : trace["traceEvents"])
    if (IsJob(e)) sources.push_back(e["args"]["source"]);
  CHECK(sources.front() == "machine0/workerlog.2:40");
  CHECK(sources.back() == "machine10/workerlog.3:40");
  // One machine: the directory of its logs, even when there is a single log.
  t.machines.resize(1);
  CHECK(SourceRoot(t) == "/data/run \"7\"/machine0/");
  t.machines[0].workers.resize(1);
  CHECK(SourceRoot(t) == "/data/run \"7\"/machine0/");
  CHECK(JobSource(t.machines[0].workers[0], t.machines[0].workers[0].jobs[0], SourceRoot(t)) == "workerlog.2:40");
  t.machines[0].workers[0].file = "-";  // standard input
  CHECK(SourceRoot(t) == "");
  t.machines[0].workers.clear();
  CHECK(SourceRoot(t) == "");
}

TEST_CASE("Perfetto trace: sort indices put machines, then workers, in order, steps on top") {
  const json trace = json::parse(TraceText(WritePerfettoTrace, SampleTimeline()));
  std::vector<int> process_order, thread_order;
  bool step_row_sorted = false;
  for (const json& e : trace["traceEvents"]) {
    const std::string name = e.value("name", "");  // flow events have none
    if (name == "process_sort_index") process_order.push_back(e["args"]["sort_index"]);
    if (name == "thread_sort_index" && e["pid"] != kStepsPid) thread_order.push_back(e["args"]["sort_index"]);
    // The Step row has an index of its own (Perfetto puts threads without one after those with one).
    step_row_sorted |= name == "thread_sort_index" && e["pid"] == kStepsPid && e["tid"] == kStepsPid && e["args"]["sort_index"] == 0;
  }
  CHECK(process_order == std::vector<int>{0, 1, 2});
  CHECK(thread_order == std::vector<int>{0, 1, 2, 3});
  CHECK(step_row_sorted);
}

TEST_CASE("Overlapping jobs get their own named rows") {
  Timeline t = SampleTimeline();
  t.machines[0].workers[0].jobs = {MakeJob("forward", "0", 100, 200), MakeJob("forward", "1", 150, 250)};
  const json trace = json::parse(TraceText(WritePerfettoTrace, t));
  bool found = false;
  for (const auto& [id, name] : ThreadNames(trace)) found |= name == "machine0 worker 2 overlap 1";
  CHECK(found);
}

TEST_CASE("Flow arrows follow each micro-batch from stage to stage, one flow event on each job, in chain order") {
  // Stages in rank order: machine0 worker 2, machine0 worker 3, machine10 worker 2, machine10 worker 3.
  const json trace = json::parse(TraceText(WritePerfettoTrace, SampleTimeline()));
  std::map<std::int64_t, std::vector<std::pair<int, std::string>>> chains;  // id -> (tid, phase), in file order
  std::set<std::tuple<int, int, std::string>> job_starts;                    // pid, tid, ts text
  for (const json& e : trace["traceEvents"]) {
    CHECK_FALSE(e.contains("bind_id"));  // not flow v2 as well: Perfetto would draw each arrow twice
    if (e["ph"] == "X" && e.contains("args") && e["args"].contains("source")) job_starts.insert({e["pid"], e["tid"], e["ts"].dump()});
    if (e["ph"] != "s" && e["ph"] != "t" && e["ph"] != "f") continue;
    CHECK_FALSE(e.contains("name"));  // both viewers key a flow by (cat, name, id): none alike on all
    CHECK(e.value("bp", "") == (e["ph"] == "f" ? "e" : ""));  // the last binds to its own job, not the next slice
    CHECK(job_starts.count({e["pid"], e["tid"], e["ts"].dump()}) == 1);  // after its job, at its exact start
    chains[e["id"]].emplace_back(e["tid"], e["ph"]);
  }
  // forward_3 runs stage 0 -> 3 and backward_4 stage 3 -> 0: one chain each.
  REQUIRE(chains.size() == 2);
  std::vector<std::vector<int>> rows;
  for (const auto& [id, links] : chains) {
    std::vector<std::string> phases;
    rows.emplace_back();
    for (const auto& [tid, phase] : links) phases.push_back(phase), rows.back().push_back(tid);
    CHECK(phases == std::vector<std::string>{"s", "t", "t", "f"});
  }
  CHECK(rows[0] == std::vector<int>{2, 3, 4, 5});
  CHECK(rows[1] == std::vector<int>{5, 4, 3, 2});
}

TEST_CASE("A counter track says how many workers are busy") {
  Timeline t;
  t.machines.emplace_back("m");
  Worker a, b;
  a.index = 0;
  b.index = 1;
  a.jobs = {MakeJob("forward", "0", 0, 10'000), MakeJob("forward", "1", 5'000, 12'000)};  // overlap: one busy worker
  b.jobs = {MakeJob("forward", "0", 8'000, 20'000)};
  t.machines[0].workers = {a, b};
  const json trace = json::parse(TraceText(WritePerfettoTrace, t));
  std::vector<std::pair<std::string, int>> counter;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "C") {
      CHECK(e["name"] == "busy");  // Perfetto names the track "busy workers": name, space, arg key
      counter.emplace_back(e["ts"].dump(), e["args"]["workers"].get<int>());
    }
  const std::vector<std::pair<std::string, int>> expected = {{"0.0", 1}, {"8.0", 2}, {"12.0", 1}, {"20.0", 0}};
  CHECK(counter == expected);
}

TEST_CASE("Output is deterministic") {
  CHECK(TraceText(WritePerfettoTrace, SampleTimeline()) == TraceText(WritePerfettoTrace, SampleTimeline()));
  CHECK(TraceText(WriteChromeTrace, SampleTimeline()) == TraceText(WriteChromeTrace, SampleTimeline()));
}

TEST_CASE("Legacy Chrome trace: the original's B/E events, GPU thread ids, colour names and Step thread") {
  const json trace = json::parse(TraceText(WriteChromeTrace, SampleTimeline()));
  std::vector<std::string> tids;
  std::map<std::string, std::string> colours;
  std::map<std::string, int> open;  // B minus E per name and thread
  for (const json& e : trace["traceEvents"]) {
    tids.push_back(e["tid"]);
    CHECK(e["pid"] == 0);
    CHECK((e["ph"] == "B" || e["ph"] == "E"));
    CHECK_FALSE(e.contains("dur"));
    CHECK_FALSE(e.contains("args"));
    if (e.contains("cname")) colours[e["cat"]] = e["cname"];
    open[e["name"].get<std::string>() + "@" + e["tid"].get<std::string>()] += e["ph"] == "B" ? 1 : -1;
  }
  for (const auto& [name, balance] : open) CHECK(balance == 0);
  CHECK(tids.front() == "GPU2(machine:0)");  // worker indices as in the logs (workerlog.2)
  CHECK(tids.back() == "Step");
  CHECK(colours["forward"] == "thread_state_running");
  CHECK(colours["backward"] == "rail_idle");
  CHECK(colours["step"] == "thread_state_unknown");
  const json& first = trace["traceEvents"][0];
  CHECK(first["name"] == "forward_3");
}

TEST_CASE("Pieces reach the sink and add up to the document") {
  Timeline t = SampleTimeline();
  for (int i = 0; i < 20000; ++i)
    t.machines[0].workers[0].jobs.push_back(MakeJob("forward", std::to_string(i), i * 1000LL, i * 1000LL + 500));
  size_t pieces = 0;
  std::string whole;
  WritePerfettoTrace(t, [&](std::string_view piece) {
    ++pieces;
    whole += piece;
  });
  CHECK(pieces > 1);
  CHECK(whole == TraceText(WritePerfettoTrace, t));
  CHECK_NOTHROW(json::parse(whole));
}

namespace {

// 64 workers x 500 jobs: 64,000 starts and ends, past the exact counter's bound.
Timeline BusyTimeline(Nanos* busy_time) {
  Timeline t;
  t.machines.emplace_back("m");
  *busy_time = 0;
  for (int w = 0; w < 64; ++w) {
    Worker worker;
    worker.index = w;
    for (int j = 0; j < 500; ++j) {
      const Nanos start = j * 10'000 + w * 97, end = start + 6'000 + w;
      worker.jobs.push_back(MakeJob("forward", std::to_string(j), start, end));
      *busy_time += end - start;
    }
    t.machines[0].workers.push_back(worker);
  }
  return t;
}

}  // namespace

TEST_CASE("The sampled counter's values are written as printf's %.3f writes them") {
  Nanos busy_time = 0;
  const Timeline t = BusyTimeline(&busy_time);
  bool sampled = false;
  const std::vector<CounterPoint> points = BusyWorkers(t, &sampled);
  REQUIRE(sampled);
  const std::string text = TraceText(WritePerfettoTrace, t);
  std::vector<std::string> written;
  const std::string key = "\"workers\":";
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    const size_t from = at + key.size();
    written.push_back(text.substr(from, text.find('}', from) - from));
  }
  REQUIRE(written.size() == points.size());
  size_t fractions = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    char expected[32];
    std::snprintf(expected, sizeof expected, "%.3f", points[i].value);
    CHECK(written[i] == expected);
    fractions += written[i].substr(written[i].size() - 3) != "000";
  }
  CHECK(fractions > points.size() / 2);  // the means are not whole numbers
}

TEST_CASE("Past 50,000 changes the busy-workers counter is a time-weighted mean that keeps the busy time") {
  Timeline t;
  t.machines.emplace_back("m");
  Nanos exact_busy = 0;
  for (int w = 0; w < 64; ++w) {
    Worker worker;
    worker.index = w;
    for (int j = 0; j < 500; ++j) {  // 64 x 500 jobs: 64,000 starts and ends
      const Nanos start = j * 10'000 + w * 97, end = start + 6'000 + w;
      worker.jobs.push_back(MakeJob("forward", std::to_string(j), start, end));
      exact_busy += end - start;
    }
    t.machines[0].workers.push_back(worker);
  }
  bool sampled = false;
  const std::vector<CounterPoint> points = BusyWorkers(t, &sampled);
  REQUIRE(sampled);
  CHECK(points.size() <= kMaxExactCounterPoints);
  double area = 0;
  for (size_t i = 0; i + 1 < points.size(); ++i)
    area += points[i].value * static_cast<double>(points[i + 1].at - points[i].at);
  CHECK(area == Approx(static_cast<double>(exact_busy)).epsilon(1e-9));
  CHECK(points.back().value == 0);
  // Every bucket holds exactly the busy time inside it, each job's part in
  // the buckets it overlaps (a job counted in the wrong bucket keeps the sum).
  std::vector<double> inside(points.size(), 0);
  for (const Worker& worker : t.machines[0].workers)
    for (const Job& job : worker.jobs) {
      size_t b = static_cast<size_t>(std::upper_bound(points.begin(), points.end(), job.start,
                                                      [](Nanos at, const CounterPoint& p) { return at < p.at; }) -
                                     points.begin()) - 1;
      for (; b + 1 < points.size() && points[b].at < job.end; ++b)
        inside[b] += static_cast<double>(std::min(job.end, points[b + 1].at) - std::max(job.start, points[b].at));
    }
  for (size_t i = 0; i + 1 < points.size(); ++i) {
    INFO("bucket " << i);
    CHECK(points[i].value * static_cast<double>(points[i + 1].at - points[i].at) == Approx(inside[i]).margin(1e-6));
  }
  bool exact_again = true;
  t.machines[0].workers.resize(2);
  BusyWorkers(t, &exact_again);
  CHECK_FALSE(exact_again);
}

TEST_CASE("Legacy Chrome trace on several threads: the same bytes, every job's B and E in order, odd names escaped") {
  // One worker with more jobs than a piece holds (8,192), one whose job
  // type and ids need escaping (quote, backslash, control byte, Latin-1).
  Timeline t = SampleTimeline();
  std::vector<Job>& many = t.machines[0].workers[0].jobs;
  many.clear();
  for (int i = 0; i < 20'000; ++i)
    many.push_back(MakeJob(i % 2 ? "backward" : "forward", std::to_string(i), 1697793307000000000 + Nanos{i} * 1'000'123,
                           1697793307000000000 + Nanos{i} * 1'000'123 + 999'001));
  t.machines[1].workers[1].jobs = {MakeJob("we\"ird\\type", "id\x01\xe9", 1697793307213760986, 1697793307254006104),
                                   MakeJob("forward", "ok", 1697793307254006104, 1697793307300000000)};
  std::string one, three;
  WriteChromeTrace(t, [&](std::string_view piece) { one += piece; }, 1);
  WriteChromeTrace(t, [&](std::string_view piece) { three += piece; }, 3);
  CHECK(one == three);
  const json trace = json::parse(one);
  std::vector<std::tuple<std::string, std::string, std::string>> expected;  // name, phase, tid
  for (size_t m = 0; m < t.machines.size(); ++m)
    for (const Worker& worker : t.machines[m].workers)
      for (const Job& job : worker.jobs)
        for (const char* phase : {"B", "E"})
          expected.emplace_back(ValidUtf8(JobName(job)), phase,
                                "GPU" + std::to_string(worker.index) + "(machine:" + std::to_string(m) + ")");
  const json& events = trace["traceEvents"];
  REQUIRE(events.size() == expected.size() + 2);  // and the step's B and E
  size_t wrong = 0;
  for (size_t i = 0; i < expected.size(); ++i)
    wrong += std::make_tuple(events[i]["name"].get<std::string>(), events[i]["ph"].get<std::string>(),
                             events[i]["tid"].get<std::string>()) != expected[i];
  CHECK(wrong == 0);
  // Times exact, as text: the 8,193rd job (the second piece's first) starts where it should.
  const Job& second_piece = many[8192];
  CHECK(one.find("\"name\":\"forward_8192\",\"cat\":\"forward\",\"ph\":\"B\",\"ts\":" + FormatMicros(second_piece.start) +
                 ",\"pid\":0,\"tid\":\"GPU2(machine:0)\",\"cname\":\"thread_state_running\"}") != std::string::npos);
  CHECK(events.back()["tid"] == "Step");
}

}  // namespace unit_json_traces_test
