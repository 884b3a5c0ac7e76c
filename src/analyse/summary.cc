#include "analyse/summary.h"

#include "analyse/stop_sentence.h"
#include "analyse/summary_workers.h"
#include "read/byte_source.h"

namespace jobviz {

namespace {

// "run": N beside "step" for a step of one of several runs (--run all).
void AddRun(nlohmann::json& entry, std::int64_t step_key) {
  if (StepRun(step_key) > 0) entry["run"] = StepRun(step_key);
}

// The topology, the per-stage table and the hybrid findings: only where a
// topology is known, so runs of one pipeline keep today's document.
void AddTopology(const Analysis& a, nlohmann::json& doc) {
  using nlohmann::json;
  const Topology& t = a.topology;
  json degrees = json::object();
  for (size_t axis = 0; axis < kAxes; ++axis) degrees[AxisName(static_cast<ParallelAxis>(axis))] = t.degrees[axis];
  doc["topology"] = {{"source", TopologySourceText(t.source)}, {"degrees", degrees}, {"replicas", t.replicas()},
                     {"pipelines", t.replicas() * t.peer_degree()}, {"detail", t.detail}};
  doc["stage_table"] = json::array();
  for (const StageAnalysis& s : a.stage_table)
    doc["stage_table"].push_back({{"stage", s.stage}, {"workers", s.workers},
                                  {"forward_mean_us", ToMicros(s.forward.mean)}, {"forward_p95_us", ToMicros(s.forward.p95)},
                                  {"backward_mean_us", ToMicros(s.backward.mean)}, {"backward_p95_us", ToMicros(s.backward.p95)},
                                  {"busy_us", ToMicros(s.busy)}, {"idle_us", ToMicros(s.idle)}, {"bubble_ratio", s.bubble_ratio}});
  doc["lagging_peers"] = json::array();
  for (const LaggingPeer& p : a.lagging_peers)
    doc["lagging_peers"].push_back({{"machine", p.machine}, {"worker", p.worker}, {"name", p.name}, {"stage", p.role.stage},
                                    {"mp", p.role.peer}, {"replica", p.role.replica}, {"behind_us", ToMicros(p.behind)},
                                    {"jobs", p.jobs}});
  doc["last_replicas"] = json::array();
  for (const LastReplica& r : a.last_replicas) {
    doc["last_replicas"].push_back({{"step", StepNumber(r.step)}, {"replica", r.replica}, {"late_by_us", ToMicros(r.late_by)}});
    AddRun(doc["last_replicas"].back(), r.step);
  }
}

// The step's bubble over every worker: idle over the step's window times
// the workers (each worker's steps are the analysis's windows, in order).
double StepBubble(const Analysis& a, size_t step) {
  Nanos busy = 0, idle = 0;
  for (const WorkerAnalysis& w : a.workers)
    if (step < w.steps.size()) {
      busy = SaturatingAdd(busy, w.steps[step].busy);
      idle = SaturatingAdd(idle, w.steps[step].idle);
    }
  return busy + idle > 0 ? static_cast<double>(idle) / static_cast<double>(busy + idle) : 0;
}

nlohmann::json RoleJson(const WorkerRole& role) {
  using nlohmann::json;
  return role.known() ? json(role.stage) : json(nullptr);
}

void AddSlowWorkers(const Analysis& a, nlohmann::json& doc) {
  using nlohmann::json;
  doc["slow_workers"] = json::array();
  for (const SlowWorker& w : a.slow_workers) {
    json types = json::array();
    for (const SlowJobType& t : w.types)
      types.push_back({{"type", t.type}, {"factor", t.factor}, {"slower", t.slower}, {"jobs", t.jobs}});
    doc["slow_workers"].push_back({{"machine", w.machine}, {"worker", w.worker}, {"name", w.name},
                                   {"stage", RoleJson(w.role)}, {"mp", w.role.peer}, {"replica", w.role.replica},
                                   {"compared_with", w.compared_with}, {"factor", w.factor}, {"types", types}});
  }
  doc["slow_stages"] = json::array();
  for (const SlowStage& s : a.bottleneck.slow_stages) doc["slow_stages"].push_back({{"stage", s.stage}, {"factor", s.factor}});
  json outliers = json::array();
  for (const OutlierJob& o : a.bottleneck.outliers) {
    outliers.push_back({{"worker", o.worker}, {"step", StepNumber(o.step)}, {"type", o.type}, {"micro_batch", o.micro_batch},
                        {"duration_us", ToMicros(o.duration)}, {"median_us", ToMicros(o.median)}});
    AddRun(outliers.back(), o.step);
  }
  doc["outlier_jobs"] = {{"count", a.bottleneck.outlier_count}, {"worst", outliers}};
}

// The critical paths by cause, the what-if table, the ranked causes and
// each step's critical path (compact: one array per job).
void AddBottleneck(const Analysis& a, nlohmann::json& doc) {
  using nlohmann::json;
  const Bottleneck& b = a.bottleneck;
  const PathBreakdown& p = b.path;
  const double total = static_cast<double>(std::max<Nanos>(1, p.total()));
  const auto share = [&](Nanos t) { return static_cast<double>(t) / total; };
  // Per step (the means), so that runs of different lengths compare.
  const double steps = static_cast<double>(std::max<size_t>(1, b.steps));
  const auto per_step = [&](Nanos t) { return static_cast<double>(t) / 1000.0 / steps; };
  json compute = json::array(), hand_offs = json::array();
  for (const auto& c : p.compute)
    compute.push_back({{"stage", c.stage}, {"type", c.type}, {"time_us", per_step(c.time)}, {"share", share(c.time)}});
  for (const auto& h : p.hand_offs)
    hand_offs.push_back({{"from", h.from}, {"to", h.to}, {"direction", h.from < h.to ? "forward" : "backward"},
                         {"time_us", per_step(h.time)}, {"share", share(h.time)}});
  json causes = json::array();
  for (const Cause& c : b.causes)
    causes.push_back({{"what_if", WhatIfKey(c.kind)}, {"text", c.text}, {"saved_us", ToMicros(c.saved)}, {"gain", c.gain}});
  doc["bottleneck"] = {
      {"steps", b.steps}, {"measured_step_us", ToMicros(b.measured_step)}, {"replayed_step_us", ToMicros(b.replayed_step)},
      {"replay_error", b.replay_error}, {"step_gap_us", ToMicros(b.step_gap)},
      {"contradicted_hand_offs", b.contradicted}, {"overlapping_jobs", b.overlaps}, {"barrier_steps", b.barrier_steps},
      {"critical_path", {{"total_us", per_step(p.total())}, {"compute_us", per_step(p.compute_total())},
                         {"hand_off_us", per_step(p.hand_off_total())}, {"all_reduce_us", per_step(p.all_reduce)},
                         {"stall_us", per_step(p.stall)},
                         {"step_start_us", per_step(p.step_start)}, {"step_gaps_us", per_step(p.step_gaps)},
                         {"compute", compute}, {"hand_offs", hand_offs}}},
      {"causes", causes}};
  doc["what_if"] = json::object();
  for (const WhatIf& w : b.what_if)
    doc["what_if"][WhatIfKey(w.kind)] = {{"change", w.change}, {"applies", w.applies}, {"step_us", ToMicros(w.step_time)},
                                         {"bubble_ratio", w.bubble_ratio}, {"saved_us", ToMicros(w.saved)}, {"gain", w.gain}};
  // [stage, replica, type, micro-batch, start after the step's start,
  //  duration, hand-off wait before it, stall before it, all-reduce wait
  //  before it], times in whole
  //  nanoseconds: exact, and a third of the size of microsecond doubles.
  doc["critical_paths"] = json::array();
  for (const CriticalPathStep& step : b.critical_paths) {
    json jobs = json::array();
    for (const CriticalJob& j : step.jobs)
      jobs.push_back({j.stage, j.replica, j.type.str(), j.micro_batch, j.start - step.start, j.end - j.start, j.hand_off,
                      j.stall, j.all_reduce});
    doc["critical_paths"].push_back({{"step", StepNumber(step.step)}, {"duration_us", ToMicros(step.end - step.start)},
                                     {"step_start_us", ToMicros(step.step_start)}, {"jobs", jobs}});
    AddRun(doc["critical_paths"].back(), step.step);
  }
}

nlohmann::json StopJobJson(const StopJob& job, Nanos run_start) {
  if (!job.known()) return nullptr;
  nlohmann::json out = {{"type", job.type.str()}, {"micro_batch", job.micro_batch}, {"step", StepNumber(job.step)}};
  AddRun(out, job.step);
  if (job.end != 0) out["end_after_start_us"] = ToMicros(job.end - run_start);
  return out;
}

// Where the run stopped (analyse/stop_report.h): always there, so that a
// gate can read it; `first` is null unless one stage stopped first.
void AddStop(const Analysis& a, const Timeline& timeline, nlohmann::json& doc) {
  using nlohmann::json;
  const StopReport& r = a.stop;
  const std::vector<const Worker*> workers = AllWorkers(timeline);
  const auto name = [&](std::uint32_t w) { return w < workers.size() ? WorkerName(timeline, *workers[w]) : ""; };
  json stages = json::array();
  for (const LaneStop& lane : r.lanes) {
    json names = json::array();
    for (const std::uint32_t w : lane.workers) names.push_back(name(w));
    json entry = {{"replica", lane.replica}, {"stage", lane.stage}, {"workers", names},
                  {"state", LaneStateKey(lane.state)}, {"last", StopJobJson(lane.last, r.run_start)},
                  {"next", StopJobJson(lane.next, r.run_start)}, {"input", lane.input},
                  {"waiting_workers", lane.waiting_workers}};
    if (lane.state == LaneState::kWaiting && lane.waits_on >= 0)
      entry["waits_on"] = {{"replica", r.lanes[lane.waits_on].replica}, {"stage", r.lanes[lane.waits_on].stage}};
    if (lane.state == LaneState::kStuck) entry["ready_after_start_us"] = ToMicros(lane.ready - r.run_start);
    if (lane.in_flight)  // libjobviz's watchdog line for its next job
      entry["in_flight"] = {{"started", lane.in_flight_started},
                            {"since_after_start_us", ToMicros(lane.in_flight_since - r.run_start)},
                            {"waited_us", ToMicros(lane.in_flight_seen - lane.in_flight_since)}};
    stages.push_back(std::move(entry));
  }
  // Every log's end where the run stopped; otherwise only logs without a job.
  const bool stopped = ShowsStop(r);
  json logs = json::array();
  for (const WorkerEnding& e : r.workers)
    if (stopped || e.no_jobs) logs.push_back({{"name", name(e.worker)}, {"last_after_start_us", e.last_time ? ToMicros(e.last_time - r.run_start) : 0.0},
                    {"before_others_us", ToMicros(e.before_others)}, {"lines", e.lines}, {"last_line", e.last_line},
                    {"cut_mid_line", e.cut_mid_line}, {"no_jobs", e.no_jobs}});
  json first = nullptr;
  if ((r.kind == StopKind::kStopped || r.kind == StopKind::kSuspect) && r.first >= 0) {
    const LaneStop& lane = r.lanes[static_cast<size_t>(r.first)];
    const Worker* w = r.first_worker < workers.size() ? workers[r.first_worker] : nullptr;
    first = {{"name", name(r.first_worker)}, {"machine", w ? w->machine : 0}, {"worker", w ? w->index : 0},
             {"stage", lane.stage}, {"mp", w ? w->role.peer : 0}, {"replica", lane.replica},
             {"last", StopJobJson(lane.last, r.run_start)}, {"next", StopJobJson(lane.next, r.run_start)},
             {"input", lane.input}, {"waiting_workers", lane.waiting_workers},
             {"log_ends_before_others_us", ToMicros(r.workers[r.first_worker].before_others)}};
    if (lane.state == LaneState::kStuck && !lane.input.empty())
      first["input_arrived_after_start_us"] = ToMicros(lane.input_arrived - r.run_start);
    first["rank"] = w && w->role.rank >= 0 ? json(w->role.rank) : json(nullptr);
    // libjobviz's host where its start line names one, else the machine directory.
    const std::string machine_dir = w ? timeline.machines[static_cast<size_t>(w->machine)].name : "";
    const std::string_view host = w ? WorkerHost(*w) : std::string_view();
    first["host"] = host.empty() ? machine_dir : std::string(host);
    first["machine_dir"] = machine_dir;
    first["file"] = w ? w->file : "";
    if (w && lane.last.known()) first["last"]["end_wall_clock"] = WallClockText(timeline, *w, lane.last.end);
    first["overdue_us"] = ToMicros(r.overdue);
  }
  json all_reduce = nullptr;
  if (r.kind == StopKind::kAllReduce)
    all_reduce = {{"global", r.all_reduce_stage < 0},
                  {"stage", r.all_reduce_stage < 0 ? json(nullptr) : json(r.all_reduce_stage)},
                  {"overdue_us", ToMicros(r.overdue)}};
  doc["stopped"] = {{"kind", StopKindKey(r.kind)}, {"sentence", r.sentence},
                    {"step", r.step == kNoStep ? json(nullptr) : json(StepNumber(r.step))},
                    {"unfinished_steps", r.unfinished_steps}, {"unfinished_jobs", r.unfinished_jobs},
                    {"global_barrier", r.barrier}, {"hedged", r.hedged}, {"hung", r.hung},
                    {"inside_jobs", r.inside_jobs}, {"first", first}, {"all_reduce", all_reduce},
                    {"stages", stages}, {"logs", logs}};
  if (r.step != kNoStep) AddRun(doc["stopped"], r.step);
}

}  // namespace

nlohmann::json SummaryJson(const Analysis& a, const Timeline& timeline, const RunCounts& counts, WorkerListing listing) {
  using nlohmann::json;
  json doc;
  doc["steps"] = json::array();
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const StepWindow& s = a.steps[i];
    doc["steps"].push_back({{"step", StepNumber(s.step)}, {"start_us", ToMicros(s.start)}, {"end_us", ToMicros(s.end)},
                            {"start_ns", s.start}, {"end_ns", s.end}, {"duration_us", ToMicros(s.duration())},
                            {"bubble_ratio", StepBubble(a, i)}});
    AddRun(doc["steps"].back(), s.step);
  }
  AddSummaryWorkers(a, listing, doc);
  doc["bubble_ratio"] = a.bubble_ratio;
  doc["ideal_bubble_ratio"] = a.schedule.ideal_bubble ? json(*a.schedule.ideal_bubble) : json(nullptr);
  doc["schedule"] = a.schedule.name;
  doc["model_chunks"] = a.schedule.chunks;
  if (!a.schedule.note.empty()) doc["schedule_note"] = a.schedule.note;
  doc["stages"] = a.stages;
  doc["micro_batches"] = a.micro_batches;
  doc["job_types"] = json::object();
  for (const auto& [type, t] : a.job_types)
    doc["job_types"][type] = {{"count", t.count}, {"total_us", ToMicros(t.total)}, {"mean_us", ToMicros(t.mean)},
                              {"p50_us", ToMicros(t.p50)}, {"p95_us", ToMicros(t.p95)}};
  AddSlowWorkers(a, doc);
  AddBottleneck(a, doc);
  if (a.topology.hybrid()) AddTopology(a, doc);
  AddStop(a, timeline, doc);
  doc["clock"] = json::array();
  for (size_t m = 0; m < timeline.machines.size(); ++m) {
    const Machine& machine = timeline.machines[m];
    doc["clock"].push_back({{"machine", m}, {"name", machine.name}, {"offset_us", ToMicros(machine.clock_offset)},
                            {"drift_ppm", machine.clock_drift_ppm},
                            {"method", machine.clock_method.empty() ? "none" : machine.clock_method}});
  }
  doc["counts"] = {{"files", counts.files}, {"lines", counts.lines}, {"jobs", counts.jobs}, {"skipped", counts.skipped}};
  return doc;
}

}  // namespace jobviz

namespace jobviz {

const nlohmann::json& SummarySchema() {
  static const nlohmann::json schema = [] {
    Analysis one;
    one.steps.push_back({});
    one.workers.push_back({});
    one.workers.back().steps.push_back({});
    one.job_types[kAnyKey] = {};
    one.slow_workers.push_back({});
    one.slow_workers.back().types.push_back({});
    one.bottleneck.slow_stages.push_back({});
    one.bottleneck.outliers.push_back({});
    one.bottleneck.speed.push_back(1.0);
    one.bottleneck.path.compute.push_back({});
    one.bottleneck.path.hand_offs.push_back({});
    one.bottleneck.causes.push_back({});
    for (size_t k = 0; k < static_cast<size_t>(WhatIfKind::kCount); ++k)
      one.bottleneck.what_if.push_back({static_cast<WhatIfKind>(k), "", false, 0, 0, 0, 0});
    one.bottleneck.critical_paths.push_back({});
    one.schedule.ideal_bubble = 0.0;
    one.topology.source = TopologySource::kOption;  // the hybrid keys too
    one.workers.back().role.stage = 0;
    one.stage_table.push_back({});
    one.lagging_peers.push_back({});
    one.last_replicas.push_back({});
    one.stop.lanes.push_back({});
    one.stop.workers.push_back({});
    Timeline timeline;
    timeline.machines.emplace_back();
    nlohmann::json doc = SummaryJson(one, timeline, {});
    doc["workers_folded"] = SummaryJson(one, timeline, {}, WorkerListing::kFolded)["workers_folded"];  // its keys too
    return doc;
  }();
  return schema;
}

}  // namespace jobviz

namespace jobviz {

namespace {

const char* TypeName(const nlohmann::json& value) {
  return value.is_number() ? "a number" : value.is_string() ? "a string" : value.is_array() ? "an array"
         : value.is_object() ? "an object" : value.is_boolean() ? "a boolean" : "null";
}

// `doc` has the shape of `schema` (SummarySchema) wherever both have a key:
// the same kind of value, an array's elements like the schema's one element;
// numbers may be null (no ideal known, no stage). Keys the schema does not
// know are left alone (a newer jobviz's). False with the field named.
bool MatchesSchema(const nlohmann::json& doc, const nlohmann::json& schema, const std::string& where, std::string* error) {
  const auto wrong = [&](const char* expected) {
    *error = (where.empty() ? "the document" : "'" + where + "'") + " is " + TypeName(doc) + ", not " + expected;
    return false;
  };
  if (schema.is_null()) return true;  // the schema's own null: anything goes
  if (schema.is_object()) {
    if (!doc.is_object()) return wrong("an object");
    for (const auto& [key, value] : doc.items()) {
      auto it = schema.find(key);
      if (it == schema.end()) it = schema.find(kAnyKey);
      if (it != schema.end() && !MatchesSchema(value, *it, where.empty() ? key : where + "." + key, error)) return false;
    }
    return true;
  }
  if (schema.is_array()) {
    if (!doc.is_array()) return wrong("an array");
    for (size_t i = 0; i < doc.size() && !schema.empty(); ++i)
      if (!MatchesSchema(doc[i], schema[0], where + "[" + std::to_string(i) + "]", error)) return false;
    return true;
  }
  if (schema.is_number()) return doc.is_number() || doc.is_null() ? true : wrong("a number");
  if (schema.is_string()) return doc.is_string() ? true : wrong("a string");
  return doc.type() == schema.type() ? true : wrong(TypeName(schema));
}

}  // namespace

std::optional<nlohmann::json> ReadSummaryFile(const std::string& path, std::string* error) {
  std::string open_error;
  const auto source = OpenByteSource(path, &open_error);  // gzip too: --summary-json s.json.gz writes one
  if (!source) {
    *error = "cannot read it: " + open_error;
    return std::nullopt;
  }
  std::string text;
  char buffer[1 << 16];
  for (long n; (n = source->Read(buffer, sizeof buffer)) != 0;) {
    if (n < 0) {
      *error = "cannot read it: " + source->error();
      return std::nullopt;
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  nlohmann::json summary = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  std::string why;
  if (summary.is_discarded()) why = "it is not JSON";
  else if (!summary.is_object() || !summary.contains("counts") || !summary.contains("bubble_ratio"))
    why = summary.contains("traceEvents") ? "it is a trace" : "it has no 'counts' and 'bubble_ratio'";
  else MatchesSchema(summary, SummarySchema(), "", &why);  // sets `why` when it does not
  if (!why.empty()) {
    *error = "not a summary JSON (jobviz --summary-json): " + why;
    return std::nullopt;
  }
  return summary;
}

}  // namespace jobviz
