// Reads jobviz's Perfetto JSON the way Perfetto's importer does and checks
// that what the viewer would show is what jobviz computed: every job and
// step to the nanosecond, no job displaced by another, every flow arrow on
// the jobs it belongs to, the counter and process names as intended.
//
// The rules, from Perfetto's source (src/trace_processor/util/json_parser.h,
// importers/json/json_trace_tokenizer.cc and json_utils, flow_tracker.cc):
//  - a number with '.' or an exponent becomes a double; two parsers exist in
//    its history: the integer part as int64 plus fraction_digits / 10^k
//    (current), and digit-by-digit double accumulation (older);
//  - "ts"/"dur" in microseconds become llround(value * 1000) ns, integers
//    value * 1000;
//  - complete events ("X") are sorted by ts; a slice that starts inside the
//    previous one on its track but ends after it does not nest (an import
//    error, moved elsewhere);
//  - events are read in the sorter's order (trace_sorter.h,
//    SlowOperatorLess): by timestamp, then "E", then "X" longest first, then
//    any other event, then file order; a slice closes when a later one on
//    its track begins at or after its end;
//  - flow v1 (json_trace_parser, flow_tracker.cc): "s" begins flow (id, cat,
//    name) at the slice open on its thread, "t" steps it there, "f" with
//    bp "e" ends it there; each arrow runs from the earlier slice to the
//    later one;
//  - a "C" event's track is "<name> <arg key>".
// Chrome DevTools' trace engine binds the same flow events by its own rules
// (FlowsHandler.ts, modelled in DevToolsArrows below).
// The critical-path row (plain "X" events on a thread of the Steps process)
// and the `critical_path` arg on jobs go through the same rules.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

#include "align/pipeline_order.h"
#include "analyse/analysis.h"
#include "analyse/bottleneck.h"
#include "emit/perfetto_json.h"
#include "emit/what_if_rows.h"
#include "model/open_jobs.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_perfetto_import_test {

using namespace jobviz;
using nlohmann::json;

namespace {

// Perfetto's current StringToDouble.
double ParseCurrent(const std::string& token) {
  size_t i = 0;
  const bool negative = token[0] == '-';
  i += negative;
  std::int64_t int_part = 0;
  for (; i < token.size() && std::isdigit(static_cast<unsigned char>(token[i])); ++i) int_part = int_part * 10 + (token[i] - '0');
  double fraction = 0;
  if (i < token.size() && token[i] == '.') {
    ++i;
    std::int64_t digits = 0;
    std::uint64_t divisor = 1;
    for (; i < token.size() && std::isdigit(static_cast<unsigned char>(token[i])); ++i) {
      digits = (token[i] - '0') + digits * 10;
      divisor *= 10;
    }
    fraction = static_cast<double>(digits) / static_cast<double>(divisor);
  }
  const double out = static_cast<double>(int_part) + fraction;
  return negative ? -out : out;
}

// The older one: digit by digit in a double.
double ParseOlder(const std::string& token) {
  size_t i = 0;
  const bool negative = token[0] == '-';
  i += negative;
  double out = 0;
  for (; i < token.size() && std::isdigit(static_cast<unsigned char>(token[i])); ++i) out = out * 10.0 + (token[i] - '0');
  if (i < token.size() && token[i] == '.') {
    ++i;
    double frac = 0, div = 1;
    for (; i < token.size() && std::isdigit(static_cast<unsigned char>(token[i])); ++i) {
      frac = frac * 10.0 + (token[i] - '0');
      div *= 10.0;
    }
    if (div > 1.0) out += frac / div;
  }
  return negative ? -out : out;
}

// CoerceToTs: microseconds in the text -> nanoseconds.
Nanos ToNanos(const std::string& token, bool older) {
  REQUIRE(token.find_first_of("eE") == std::string::npos);
  if (token.find('.') == std::string::npos) return std::stoll(token) * 1000;
  return static_cast<Nanos>(std::llround((older ? ParseOlder(token) : ParseCurrent(token)) * 1000.0));
}

// The raw text of a top-level number member of one event line.
std::string RawNumber(const std::string& line, const std::string& key) {
  const size_t at = line.find("\"" + key + "\":");
  REQUIRE(at != std::string::npos);
  const size_t begin = at + key.size() + 3;
  const size_t end = line.find_first_not_of("-0123456789.eE+", begin);
  return line.substr(begin, end - begin);
}

struct Slice {
  int pid = 0, tid = 0;
  Nanos ts = 0, end = 0;
  std::string source;  // jobs: "file:line"; steps: "stepN"
  json event;
  std::string ts_text;
};

// A flow event: phase, id, where and when, in file order.
struct FlowEvent {
  char phase = 0;
  std::int64_t id = 0;
  std::string cat, name, ts_text;
  int pid = 0, tid = 0;
  Nanos ts = 0;
  bool bind_enclosing = false;
};

struct Imported {
  std::vector<Slice> slices;
  std::vector<FlowEvent> flows;
  std::map<std::string, std::vector<std::pair<Nanos, int>>> counters;  // track name -> (ts, value)
  std::map<int, std::string> process_names;
  std::set<std::pair<std::string, std::string>> arrows;  // (from source, to source)
  size_t flow_errors = 0;
};

// Perfetto's flow v1 import: events in the sorter's order, each flow event
// bound to the slice open on its thread.
void BindFlowsAsPerfetto(Imported& imported) {
  struct Item {
    Nanos ts;
    std::int64_t key;  // SlowOperatorLess: "X" longest first, then everything else
    size_t order;      // file order: slices were read before the flow events, which come last
    const Slice* slice;
    const FlowEvent* flow;
  };
  std::vector<Item> items;
  size_t order = 0;
  for (const Slice& s : imported.slices) items.push_back({s.ts, INT64_MAX - (s.end - s.ts), order++, &s, nullptr});
  for (const FlowEvent& f : imported.flows) items.push_back({f.ts, INT64_MAX, order++, nullptr, &f});
  std::sort(items.begin(), items.end(),
            [](const Item& a, const Item& b) { return std::tie(a.ts, a.key, a.order) < std::tie(b.ts, b.key, b.order); });
  std::map<std::pair<int, int>, std::vector<const Slice*>> stacks;
  std::map<std::tuple<std::int64_t, std::string, std::string>, const Slice*> open;  // v1 flow id -> its last slice
  for (const Item& item : items) {
    if (item.slice) {
      auto& stack = stacks[{item.slice->pid, item.slice->tid}];
      while (!stack.empty() && stack.back()->end <= item.ts) stack.pop_back();
      stack.push_back(item.slice);
      continue;
    }
    const FlowEvent& f = *item.flow;
    const auto& stack = stacks[{f.pid, f.tid}];
    if (stack.empty() || (f.phase == 'f' && !f.bind_enclosing)) {
      ++imported.flow_errors;  // flow_no_enclosing_slice, or bound to the next slice instead
      continue;
    }
    const Slice* here = stack.back();
    const auto key = std::make_tuple(f.id, f.cat, f.name);
    if (f.phase == 's') {
      imported.flow_errors += !open.emplace(key, here).second;  // flow_duplicate_id
      continue;
    }
    const auto it = open.find(key);
    if (it == open.end()) {
      ++imported.flow_errors;  // flow_step_without_start, flow_end_without_start
      continue;
    }
    const Slice* from = it->second->ts <= here->ts ? it->second : here;
    const Slice* to = from == here ? it->second : here;
    imported.arrows.insert({from->source, to->source});
    if (f.phase == 't') it->second = here;
  }
}

// Chrome DevTools' trace engine (FlowsHandler.ts): flow events are taken in
// file order, one flow from an "s" through its "t"s to its "f", grouped by
// cat, name and id; each is bound to the non-flow event of equal cat, tid,
// pid and ts (as a double: the same text gives the same number), and the
// arrows join the bound events in turn. Unbound places count as errors.
std::set<std::pair<std::string, std::string>> DevToolsArrows(const Imported& imported, size_t* errors) {
  using Binding = std::tuple<std::string, int, int, double>;  // cat, tid, pid, ts
  std::map<std::tuple<std::string, std::string, std::int64_t>, std::vector<const FlowEvent*>> growing;
  std::vector<std::vector<const FlowEvent*>> flows;
  for (const FlowEvent& f : imported.flows) {
    const auto group = std::make_tuple(f.cat, f.name, f.id);
    if (f.phase == 's') {
      growing[group] = {&f};
      continue;
    }
    const auto it = growing.find(group);
    if (it == growing.end()) {
      ++*errors;  // quietly ignored by DevTools
      continue;
    }
    it->second.push_back(&f);
    if (f.phase == 'f') {
      flows.push_back(std::move(it->second));
      growing.erase(it);
    }
  }
  *errors += growing.size();  // never ended: not drawn
  std::map<Binding, std::vector<const Slice*>> by_binding;
  for (const Slice& s : imported.slices)
    by_binding[{s.event.value("cat", "undefined"), s.tid, s.pid, std::strtod(s.ts_text.c_str(), nullptr)}].push_back(&s);
  std::set<std::pair<std::string, std::string>> arrows;
  for (const auto& flow : flows) {
    std::vector<const Slice*> bound;
    for (const FlowEvent* f : flow) {
      const auto it = by_binding.find({f->cat.empty() ? "undefined" : f->cat, f->tid, f->pid, std::strtod(f->ts_text.c_str(), nullptr)});
      if (it == by_binding.end() || it->second.size() != 1) {
        ++*errors;  // no event there, or several (the last in file order would win)
        continue;
      }
      bound.push_back(it->second.front());
    }
    for (size_t i = 1; i < bound.size(); ++i) arrows.insert({bound[i - 1]->source, bound[i]->source});
  }
  return arrows;
}

Imported Import(const std::string& text, bool older) {
  const json whole = json::parse(text);
  const Nanos origin = whole["metadata"]["trace_origin_ns"].get<Nanos>();
  Imported imported;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] != '{' || line.rfind("{\"traceEvents\"", 0) == 0) continue;
    if (line.back() == ',') line.pop_back();
    const json e = json::parse(line);
    if (e["ph"] == "M" && e["name"] == "process_name") imported.process_names[e["pid"]] = e["args"]["name"];
    if (e["ph"] == "C")
      for (const auto& [key, value] : e["args"].items())
        imported.counters[e["name"].get<std::string>() + " " + key].emplace_back(
            origin + ToNanos(RawNumber(line, "ts"), older), value.get<int>());
    CHECK_FALSE(e.contains("bind_id"));  // flow v2 beside v1 would draw every arrow twice
    if (e["ph"] == "s" || e["ph"] == "t" || e["ph"] == "f") {
      const std::string phase = e["ph"];
      imported.flows.push_back({phase[0], e["id"], e.value("cat", ""), e.value("name", ""), RawNumber(line, "ts"), e["pid"], e["tid"],
                                origin + ToNanos(RawNumber(line, "ts"), older), e.value("bp", "") == "e"});
      continue;
    }
    if (e["ph"] != "X") continue;
    Slice s{e["pid"], e["tid"], origin + ToNanos(RawNumber(line, "ts"), older), 0,
            e["args"].contains("source") ? e["args"]["source"].get<std::string>() : e["name"].get<std::string>(), e,
            RawNumber(line, "ts")};
    s.end = s.ts + ToNanos(RawNumber(line, "dur"), older);
    imported.slices.push_back(s);
  }
  BindFlowsAsPerfetto(imported);
  return imported;
}

// A 1F1B pipeline on epoch-scale clocks, jobs back to back on each worker
// and hand-offs that start exactly when the previous stage ends.
Timeline Pipeline(int machines, int workers, int micro_batches, int steps, unsigned seed) {
  std::mt19937_64 random(seed);
  const int stages = machines * workers;
  Timeline t;
  for (int m = 0; m < machines; ++m) {
    Machine machine("machine" + std::to_string(m));
    for (int w = 0; w < workers; ++w) {
      Worker worker;
      worker.machine = m;
      worker.index = w;
      worker.file = machine.name + "/workerlog." + std::to_string(w);
      machine.workers.push_back(worker);
    }
    machine.clock_method = m == 0 ? "reference" : "sync";
    machine.clock_offset = m == 0 ? 0 : 4'021'125 * m;
    t.machines.push_back(machine);
  }
  auto worker_of = [&](int s) -> Worker& { return t.machines[s / workers].workers[s % workers]; };
  std::vector<Nanos> free_at(stages, 1'795'331'257'447'230'054);  // 2026, sub-microsecond digits
  std::uint64_t line = 1;
  for (int step = 0; step < steps; ++step) {
    std::vector<std::vector<Nanos>> forward_end(stages, std::vector<Nanos>(micro_batches));
    std::vector<std::vector<Nanos>> backward_end(stages, std::vector<Nanos>(micro_batches));
    for (int mb = 0; mb < micro_batches; ++mb)
      for (int s = 0; s < stages; ++s) {
        const Nanos ready = s == 0 ? free_at[s] : std::max(free_at[s], forward_end[s - 1][mb]);
        const Nanos end = ready + 1'000'000 + static_cast<Nanos>(random() % 1000);  // ~1 ms, odd ns
        worker_of(s).jobs.push_back({std::to_string(mb), "forward", mb, ready, end, line++, step});
        free_at[s] = forward_end[s][mb] = end;
      }
    for (int mb = 0; mb < micro_batches; ++mb)
      for (int s = stages - 1; s >= 0; --s) {
        const Nanos ready = s == stages - 1 ? free_at[s] : std::max(free_at[s], backward_end[s + 1][mb]);
        const Nanos end = ready + (mb % 5 == 4 ? 0 : 2'000'000 + static_cast<Nanos>(random() % 1000));
        worker_of(s).jobs.push_back({std::to_string(mb), "backward", mb, ready, end, line++, step});
        free_at[s] = backward_end[s][mb] = end;
      }
    Nanos step_start = INT64_MAX, step_end = 0;
    for (int s = 0; s < stages; ++s)
      for (const Job& job : worker_of(s).jobs)
        if (job.step == step) step_start = std::min(step_start, job.start), step_end = std::max(step_end, job.end);
    t.steps.push_back({step, step_start, step_end});
  }
  for (Machine& machine : t.machines)
    for (Worker& worker : machine.workers)
      std::stable_sort(worker.jobs.begin(), worker.jobs.end(), [](const Job& a, const Job& b) { return a.start < b.start; });
  return t;
}

std::map<std::string, const Job*> JobsBySource(const Timeline& t) {
  std::map<std::string, const Job*> jobs;
  for (const Machine& machine : t.machines)
    for (const Worker& worker : machine.workers)
      for (const Job& job : worker.jobs) jobs[worker.file + ":" + std::to_string(job.line)] = &job;
  return jobs;
}

void CheckExact(const Timeline& t, bool older, JsonArgs args = JsonArgs::kCompact) {
  std::string text;
  WritePerfettoTrace(t, [&](std::string_view piece) { text += piece; }, 1, args);
  const Imported imported = Import(text, older);
  const auto jobs = JobsBySource(t);
  std::map<std::string, OpenSlice> open;  // the open slices of jobs that never ended (model/open_jobs.h)
  for (const Machine& machine : t.machines)
    for (const Worker& worker : machine.workers)
      for (const OpenSlice& slice : OpenSlices(worker)) open[worker.file + ":" + std::to_string(slice.job->line)] = slice;
  size_t job_slices = 0, open_slices = 0;
  for (const Slice& s : imported.slices) {
    if (!s.event["args"].contains("source")) continue;  // a step
    if (s.event.value("cat", "") == "in_flight") {
      const OpenSlice& slice = open.at(s.source);
      INFO(s.source);
      CHECK(s.event["name"] == OpenSliceName(*slice.job));
      REQUIRE(s.ts == slice.start);
      REQUIRE(s.end == slice.end);
      ++open_slices;
      continue;
    }
    ++job_slices;
    const Job& job = *jobs.at(s.source);
    INFO(s.source);
    REQUIRE(s.ts == job.start);
    REQUIRE(s.end == job.end);
  }
  CHECK(job_slices == jobs.size());
  CHECK(open_slices == open.size());
  for (size_t i = 0; i < t.steps.size(); ++i) {
    const Slice& s = *std::find_if(imported.slices.begin(), imported.slices.end(), [&](const Slice& x) {
      return x.source == "step" + std::to_string(t.steps[i].step);
    });
    CHECK(s.ts == t.steps[i].start);
    CHECK(s.end == t.steps[i].end);
  }
  // No slice starts inside another on its track and ends after it.
  std::map<std::pair<int, int>, std::vector<const Slice*>> tracks;
  for (const Slice& s : imported.slices) tracks[{s.pid, s.tid}].push_back(&s);
  size_t partial_overlaps = 0;
  for (auto& [track, slices] : tracks) {
    std::sort(slices.begin(), slices.end(), [](const Slice* a, const Slice* b) { return a->ts < b->ts; });
    for (size_t i = 1; i < slices.size(); ++i)
      partial_overlaps += slices[i]->ts < slices[i - 1]->end && slices[i]->end > slices[i - 1]->end;
  }
  CHECK(partial_overlaps == 0);
  // Every hand-off is an arrow between exactly its two jobs.
  std::set<std::pair<std::string, std::string>> expected;
  std::map<const Job*, std::string> source_of;
  for (const auto& [source, job] : jobs) source_of[job] = source;
  ForEachHandOff(t, [&](const HandOff& h) { expected.insert({source_of[h.sender], source_of[h.receiver]}); });
  CHECK(imported.flow_errors == 0);
  CHECK(imported.arrows == expected);
  size_t devtools_errors = 0;
  CHECK(DevToolsArrows(imported, &devtools_errors) == expected);
  CHECK(devtools_errors == 0);
}

}  // namespace

TEST_CASE("Perfetto's number parse gives back every job and step to the nanosecond") {
  for (unsigned seed : {1u, 2u, 3u}) {
    const Timeline t = Pipeline(2, 2, 8, 3, seed);
    CheckExact(t, /*older=*/false);
    CheckExact(t, /*older=*/true);
    CheckExact(t, /*older=*/false, JsonArgs::kFull);  // jobs and their flow events in the job type's category
  }
}

TEST_CASE("A job that never ended imports as an open slice to its log's end, to the nanosecond, nested") {
  Timeline t = Pipeline(2, 2, 6, 2, 5);
  Worker& stuck = t.machines[1].workers[0];
  const Job& last = stuck.jobs.back();
  // Its watchdog line: a backward that began 1.234567 us after the last job
  // ended, its log's last stamped line 60 s later (odd nanoseconds on purpose).
  stuck.in_flight.push_back({Name("7"), Name("backward"), 5, last.end + 1'234'567, last.end + 30'000'000'001, 999, true});
  stuck.end.stamped = last.end + 60'000'000'003;
  // One that began while the last job ran (a line later ended by a job line
  // the log lost): not drawn, as it would not nest.
  Worker& other = t.machines[0].workers[1];
  other.in_flight.push_back({Name("8"), Name("forward"), 2, other.jobs.back().start + 1, other.jobs.back().start + 2, 998, true});
  REQUIRE(OpenSlices(stuck).size() == 1);
  CHECK(OpenSlices(stuck).front().end == stuck.end.stamped);
  CHECK(OpenSlices(other).empty());
  CheckExact(t, /*older=*/false);
  CheckExact(t, /*older=*/true);
  const Imported imported = Import(TraceText(WritePerfettoTrace, t), false);
  const auto open = std::find_if(imported.slices.begin(), imported.slices.end(),
                                 [](const Slice& s) { return s.event.value("cat", "") == "in_flight"; });
  REQUIRE(open != imported.slices.end());
  CHECK(open->event["args"]["in_flight"] == "began, never ended: still running when its log ends");
  CHECK(open->event["args"]["micro_batch"] == 5);
}

TEST_CASE("Epoch microseconds written raw would move jobs: the check can fail") {
  // What jobviz used to write: absolute microseconds. Perfetto's parse of
  // them is off by up to ~250 ns, which is what the relative times avoid.
  const Nanos t = 1'795'331'257'447'230'054;
  std::string text = std::to_string(t / 1000) + "." + std::to_string(t % 1000);
  int wrong = 0;
  for (Nanos d = 0; d < 1000; ++d) {
    const Nanos v = t + d * 7;
    text = std::to_string(v / 1000) + "." + std::string(3 - std::to_string(v % 1000).size(), '0') + std::to_string(v % 1000);
    wrong += ToNanos(text, false) != v;
  }
  CHECK(wrong > 500);
}

TEST_CASE("The busy-workers counter and the machines' clock alignment show under the intended names") {
  const Timeline t = Pipeline(2, 2, 4, 1, 7);
  const Imported imported = Import(TraceText(WritePerfettoTrace, t), false);
  REQUIRE(imported.counters.count("busy workers") == 1);
  CHECK(imported.counters.size() == 1);
  CHECK(imported.counters.at("busy workers").front().second == 1);
  CHECK(imported.process_names.at(2) == "machine0 (clock reference)");
  CHECK(imported.process_names.at(3) == "machine1 (clock sync +4021.125 us, drift +0.000 ppm)");
}

TEST_CASE("The critical-path row and the jobs marked on it import as computed, to the nanosecond") {
  const Timeline t = Pipeline(2, 2, 6, 3, 11);
  const Bottleneck b = FindCriticalPaths(t, StepWindowsOf(t, 1), 1);
  REQUIRE(b.critical_paths.size() == 3);
  std::string text;
  WritePerfettoTrace(t, [&](std::string_view piece) { text += piece; }, 1, JsonArgs::kCompact, &b);
  for (bool older : {false, true}) {
    const Imported imported = Import(text, older);
    // The row: a thread of the Steps process named "Critical path".
    int row = -1;
    const json document = json::parse(text);
    for (const json& e : document["traceEvents"])
      if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name" && e["args"].value("name", "") == kCriticalPathRow)
        row = e["tid"];
    REQUIRE(row >= 0);
    std::vector<const Slice*> path;
    for (const Slice& s : imported.slices)
      if (s.event.value("cat", "") == "critical_path") {
        CHECK(s.pid == imported.slices.front().pid);  // the Steps process, which comes first
        CHECK(s.tid == row);
        path.push_back(&s);
      }
    std::sort(path.begin(), path.end(), [](const Slice* a, const Slice* b) { return a->ts < b->ts; });
    // Each step's slices tile the step exactly, and each path job is a slice
    // with the job's own start and end.
    for (const CriticalPathStep& step : b.critical_paths) {
      INFO("step " << step.step);
      std::vector<const Slice*> in_step;
      for (const Slice* s : path)
        if (s->event["args"]["step"] == step.step) in_step.push_back(s);
      REQUIRE(!in_step.empty());
      CHECK(in_step.front()->ts == step.start);
      CHECK(in_step.back()->end == step.end);
      for (size_t i = 1; i < in_step.size(); ++i) CHECK(in_step[i]->ts == in_step[i - 1]->end);
      for (const CriticalJob& job : step.jobs) {
        const auto it = std::find_if(in_step.begin(), in_step.end(), [&](const Slice* s) { return s->ts == job.start && s->end == job.end; });
        CHECK(it != in_step.end());
      }
    }
    // The jobs with critical_path: 1 on the worker rows are exactly the path's.
    const auto jobs = JobsBySource(t);
    std::set<const Job*> marked, expected;
    for (const Slice& s : imported.slices)
      if (s.event["args"].contains("source") && s.event["args"].value("critical_path", 0) == 1) marked.insert(jobs.at(s.source));
    size_t w = 0;
    for (const Machine& machine : t.machines)
      for (const Worker& worker : machine.workers) {
        for (std::uint32_t j = 0; j < worker.jobs.size(); ++j)
          if (OnCriticalPath(b, w, j)) expected.insert(&worker.jobs[j]);
        ++w;
      }
    CHECK(!expected.empty());
    CHECK(marked == expected);
  }
}

TEST_CASE("A critical-path row of more than one piece is written whole, in order, whatever the threads") {
  // 64 stages, 8 micro-batches, 60 steps: 8,520 slices on the row, more
  // than one piece of them (pieces are formatted on several threads).
  const Timeline t = Pipeline(8, 8, 8, 60, 5);
  const Bottleneck b = FindCriticalPaths(t, StepWindowsOf(t, 1), 2);
  const CriticalPathView view(t, &b);
  REQUIRE(view.slices().size() > 8192);
  std::string text;
  WritePerfettoTrace(t, [&](std::string_view piece) { text += piece; }, 2, JsonArgs::kCompact, &b);
  std::string one_thread;
  WritePerfettoTrace(t, [&](std::string_view piece) { one_thread += piece; }, 1, JsonArgs::kCompact, &b);
  CHECK(text == one_thread);
  // Each event is a line of its own: the row's slices, in the order the view has them.
  const Nanos origin = TraceOrigin(t);
  std::istringstream lines(text);
  std::string line;
  size_t n = 0, names = 0, mismatched = 0;
  while (std::getline(lines, line)) {
    if (line.find("\"name\":\"thread_name\"") != std::string::npos && line.find(kCriticalPathRow) != std::string::npos) ++names;
    if (line.find("\"cat\":\"critical_path\"") == std::string::npos) continue;
    if (line.back() == ',') line.pop_back();
    const json event = json::parse(line);
    if (n < view.slices().size()) {
      const CriticalPathView::Slice& slice = view.slices()[n];
      mismatched += event["name"] != slice.name || ToNanos(RawNumber(line, "ts"), false) != slice.start - origin ||
                    ToNanos(RawNumber(line, "dur"), false) != slice.end - slice.start;
    }
    ++n;
  }
  CHECK(names == 1);
  CHECK(n == view.slices().size());
  CHECK(mismatched == 0);
}

TEST_CASE("A what-if's replay imports as a process of its own, every job at its replayed time to the nanosecond") {
  Timeline t = Pipeline(2, 2, 6, 3, 13);
  // A slow worker (stage 2 of 4): the replay of "no slow workers" moves every job after its jobs.
  for (Job& job : t.machines[1].workers[0].jobs) job.end = job.start + (job.end - job.start) * 13 / 10;
  for (Machine& machine : t.machines)
    for (Worker& worker : machine.workers) {  // pushed later behind it: keep every row in order
      std::stable_sort(worker.jobs.begin(), worker.jobs.end(), [](const Job& a, const Job& b) { return a.start < b.start; });
    }
  const Analysis a = Analyze(t, 1, {.draw = true, .kind = WhatIfKind::kAll});
  REQUIRE(a.bottleneck.drawn_what_if);
  const WhatIfRows rows = MakeWhatIfRows(t, &a.bottleneck);
  REQUIRE(!rows.empty());
  CHECK(rows.title.rfind("what-if: all of the above: ", 0) == 0);
  std::string text;
  WritePerfettoTrace(t, [&](std::string_view piece) { text += piece; }, 1, JsonArgs::kCompact, &a.bottleneck, nullptr, &rows);
  std::map<std::string, const Job*> replayed;  // source -> the copy at its replayed time
  for (const auto& [machine, worker] : rows.workers)
    for (const Job& job : worker.jobs) replayed[worker.file + ":" + std::to_string(job.line)] = &job;
  const auto measured = JobsBySource(t);
  for (bool older : {false, true}) {
    const Imported imported = Import(text, older);
    int what_if_pid = -1;
    for (const auto& [pid, name] : imported.process_names)
      if (name == rows.title) what_if_pid = pid;
    REQUIRE(what_if_pid > 0);
    CHECK(what_if_pid == imported.process_names.rbegin()->first);  // the last process
    size_t replayed_slices = 0, measured_slices = 0, moved = 0;
    for (const Slice& s : imported.slices) {
      if (!s.event["args"].contains("source")) continue;
      INFO(s.source);
      const Job& job = s.pid == what_if_pid ? *replayed.at(s.source) : *measured.at(s.source);
      CHECK(s.ts == job.start);
      CHECK(s.end == job.end);
      if (s.pid == what_if_pid) {
        ++replayed_slices;
        moved += job.start != measured.at(s.source)->start;
        CHECK_FALSE(s.event["args"].contains("critical_path"));  // a copy is on no path
      } else {
        ++measured_slices;
      }
    }
    CHECK(replayed_slices == replayed.size());
    CHECK(measured_slices == measured.size());
    CHECK(moved > 0);
    CHECK(imported.flow_errors == 0);  // the arrows stay on the measured jobs
  }
}

}  // namespace unit_perfetto_import_test
