#include "history/run_record.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "emit/trace_events.h"

namespace jobviz {

namespace {

using nlohmann::json;

// A 64-bit hash over words (FNV-1a's idea, a word at a time with a
// multiply-rotate mix): the identity needs no cryptography, only that two
// different runs' jobs almost never hash alike, at a few ns a job.
class RunHash {
 public:
  void Add(std::uint64_t word) {
    hash_ = (hash_ ^ word) * 0x9E3779B97F4A7C15ULL;
    hash_ ^= hash_ >> 29;
  }
  void AddText(std::string_view text) {
    Add(text.size());
    for (size_t i = 0; i < text.size(); i += 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, text.data() + i, std::min<size_t>(8, text.size() - i));
      Add(word);
    }
  }
  std::uint64_t hash() const { return hash_; }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

template <typename T>
std::optional<T> SummaryValue(const json& doc, const char* key) {
  const auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

void RecordTopology(const json& summary, RunRecord& r) {
  const auto topology = summary.find("topology");
  if (topology == summary.end()) return;
  const json& degrees = topology->at("degrees");
  r.pp = degrees.value("pp", 1);
  r.mp = degrees.value("mp", 1) * degrees.value("sep", 1);
  r.dp = degrees.value("dp", 1) * degrees.value("sharding", 1);
}

// Per step: its duration and the bubble of its workers together.
void RecordSteps(const json& summary, RunRecord& r) {
  std::vector<double> durations;
  for (const json& step : summary.at("steps")) {
    const double duration = step.value("duration_us", 0.0);
    r.step_rows.push_back({step.at("step").get<std::int64_t>(), {duration, step.value("bubble_ratio", 0.0)}});
    durations.push_back(duration);
  }
  r.steps = r.step_rows.size();
  r.step_us = Median(durations);
}

void RecordWhatIfs(const json& summary, RunRecord& r) {
  const json what_ifs = summary.value("what_if", json::object());  // kept: items() refers into it
  for (const auto& [key, w] : what_ifs.items())
    r.what_ifs.push_back({key, w.value("applies", false), w.value("gain", 0.0), w.value("saved_us", 0.0)});
  const json causes = summary.value("bottleneck", json::object()).value("causes", json::array());
  if (!causes.empty()) {
    r.top_cause = causes[0].value("text", "");
    r.top_what_if = causes[0].value("what_if", "");
    r.top_gain = causes[0].value("gain", 0.0);
  }
}

void RecordStop(const json& summary, RunRecord& r) {
  const json stopped = summary.value("stopped", json::object());
  r.stop_kind = stopped.value("kind", "finished");
  r.stop_sentence = stopped.value("sentence", "");
  r.stop_step = SummaryValue<std::int64_t>(stopped, "step");
  const auto first = stopped.find("first");
  if (first == stopped.end() || first->is_null()) return;
  r.stop_host = first->value("host", "");
  r.stop_gpu = first->value("worker", 0);
  r.stop_rank = SummaryValue<std::int64_t>(*first, "rank");
}

// The no-slow-workers what-if's gain, shared among the slow workers.
void ShareSlowWorkersCost(const json& summary, RunRecord& r, const std::map<std::pair<int, int>, size_t>& row_of) {
  double saved_us = 0;
  for (const RecordedWhatIf& w : r.what_ifs)
    if (w.key == "no_slow_workers" && w.applies) saved_us = w.saved_us;
  double excess = 0;
  const json slow_workers = summary.value("slow_workers", json::array());
  for (const json& slow : slow_workers) excess += std::max(0.0, slow.value("factor", 1.0) - 1);
  for (const json& slow : slow_workers) {
    const auto it = row_of.find({slow.value("machine", 0), slow.value("worker", 0)});
    if (it == row_of.end()) continue;
    RecordedWorker& w = r.worker_rows[it->second];
    w.slow_factor = slow.value("factor", 1.0);
    w.cost_us = excess > 0 ? saved_us * std::max(0.0, *w.slow_factor - 1) / excess : 0;
    w.score = r.step_us > 0 ? w.cost_us / r.step_us : 0;
  }
}

// Every worker, from the analysis: the summary lists them all only up to
// kListedWorkers (analyse/summary_workers.h).
void RecordWorkers(const FinishedRun& run, RunRecord& r) {
  const Analysis& a = run.analysis;
  const bool hybrid = a.topology.hybrid();
  std::map<std::pair<int, int>, size_t> row_of;  // (machine, worker) -> its row
  for (size_t i = 0; i < a.workers.size(); ++i) {
    const WorkerAnalysis& w = a.workers[i];
    const Machine& m = run.timeline.machines.at(static_cast<size_t>(w.machine));
    const auto worker = std::find_if(m.workers.begin(), m.workers.end(), [&](const Worker& x) { return x.index == w.worker; });
    RecordedWorker row;
    row.machine_dir = m.name;
    const std::string_view host = worker != m.workers.end() ? WorkerHost(*worker) : std::string_view();
    row.host = host.empty() ? m.name : std::string(host);
    row.gpu = w.worker;
    if (hybrid && w.role.rank >= 0) row.rank = w.role.rank;
    if (w.role.known()) row.stage = w.role.stage;
    row.mp = hybrid ? w.role.peer : 0;
    row.replica = hybrid ? w.role.replica : 0;
    row.busy_us = ToMicros(w.busy);
    row.idle_us = ToMicros(w.idle);
    if (const double speed = SpeedOf(a.bottleneck, i); speed > 0) row.speed = speed;
    row.first_stop = r.stop_gpu == w.worker && !r.stop_host.empty() && (r.stop_host == row.host || r.stop_host == m.name);
    row_of[{w.machine, w.worker}] = r.worker_rows.size();
    r.worker_rows.push_back(std::move(row));
  }
  ShareSlowWorkersCost(run.summary, r, row_of);
}

}  // namespace

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

void RunningMedian::Add(double value) {
  if (lower_.empty() || value <= lower_.top())
    lower_.push(value);
  else
    upper_.push(value);
  if (lower_.size() > upper_.size() + 1) {
    upper_.push(lower_.top());
    lower_.pop();
  } else if (upper_.size() > lower_.size()) {
    lower_.push(upper_.top());
    upper_.pop();
  }
}

double RunningMedian::median() const {
  if (lower_.empty()) return 0;
  return lower_.size() > upper_.size() ? lower_.top() : (lower_.top() + upper_.top()) / 2;
}

std::string RunIdentity(const Timeline& timeline) {
  RunHash hash;
  for (const Machine& machine : timeline.machines) {
    hash.AddText(machine.name);
    for (const Worker& worker : machine.workers) {
      hash.Add(static_cast<std::uint64_t>(worker.index));
      hash.Add(worker.jobs.size());
      for (const Job& job : worker.jobs) {
        hash.AddText(job.type.str());
        hash.Add(static_cast<std::uint64_t>(job.micro_batch));
        hash.Add(static_cast<std::uint64_t>(job.start));
        hash.Add(static_cast<std::uint64_t>(job.end));
      }
    }
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash.hash()));
  return hex;
}

RunRecord RecordOf(const FinishedRun& run, std::string name, std::map<std::string, std::string> tags,
                   std::string command, std::int64_t recorded_at) {
  RunRecord r;
  const json& summary = run.summary;
  r.identity = RunIdentity(run.timeline);
  r.recorded_at = recorded_at;
  r.started_at = TraceOrigin(run.timeline) / 1'000'000'000;
  r.name = std::move(name);
  r.tags = std::move(tags);
  r.command = std::move(command);
  RecordTopology(summary, r);
  r.stages = summary.value("stages", 0);
  r.micro_batches = summary.value("micro_batches", 0);
  r.machines = run.timeline.machines.size();
  r.jobs = run.jobs;
  r.schedule = summary.value("schedule", "");
  r.bubble = summary.value("bubble_ratio", 0.0);
  r.ideal_bubble = SummaryValue<double>(summary, "ideal_bubble_ratio");
  RecordSteps(summary, r);
  RecordWhatIfs(summary, r);
  RecordStop(summary, r);
  RecordWorkers(run, r);
  r.workers = r.worker_rows.size();
  return r;
}

}  // namespace jobviz
