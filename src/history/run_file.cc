#include "history/run_file.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "history/ledger_store.h"
#include "write/atomic_file.h"

namespace jobviz {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kRunFileVersion = 1;

template <typename T>
json Opt(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

template <typename T>
std::optional<T> OptOf(const json& doc, const char* key) {
  const auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

json WorkerToJson(const RecordedWorker& w) {
  return {{"host", w.host}, {"machine_dir", w.machine_dir}, {"gpu", w.gpu}, {"rank", Opt(w.rank)}, {"stage", Opt(w.stage)},
          {"mp", w.mp}, {"replica", w.replica}, {"busy_us", w.busy_us}, {"idle_us", w.idle_us}, {"speed", Opt(w.speed)},
          {"slow_factor", Opt(w.slow_factor)}, {"cost_us", w.cost_us}, {"score", w.score}, {"first_stop", w.first_stop}};
}

RecordedWorker WorkerFromJson(const json& j) {
  RecordedWorker w;
  w.host = j.at("host").get<std::string>();
  w.machine_dir = j.at("machine_dir").get<std::string>();
  w.gpu = j.at("gpu").get<int>();
  w.rank = OptOf<std::int64_t>(j, "rank");
  w.stage = OptOf<int>(j, "stage");
  w.mp = j.value("mp", 0);
  w.replica = j.value("replica", 0);
  w.busy_us = j.value("busy_us", 0.0);
  w.idle_us = j.value("idle_us", 0.0);
  w.speed = OptOf<double>(j, "speed");
  w.slow_factor = OptOf<double>(j, "slow_factor");
  w.cost_us = j.value("cost_us", 0.0);
  w.score = j.value("score", 0.0);
  w.first_stop = j.value("first_stop", false);
  return w;
}

}  // namespace

bool IsRunDirectory(const std::string& path) {
  std::error_code ec;
  return (!path.empty() && path.back() == '/') || fs::is_directory(path, ec);
}

json RunToJson(const RunRecord& r) {
  json steps = json::array(), workers = json::array(), what_ifs = json::array();
  for (const auto& [step, values] : r.step_rows) steps.push_back({step, values.first, values.second});
  for (const RecordedWorker& w : r.worker_rows) workers.push_back(WorkerToJson(w));
  for (const RecordedWhatIf& w : r.what_ifs)
    what_ifs.push_back({{"key", w.key}, {"applies", w.applies}, {"gain", w.gain}, {"saved_us", w.saved_us}});
  return {{"jobviz_run", kRunFileVersion}, {"identity", r.identity}, {"recorded_at", r.recorded_at},
          {"started_at", r.started_at}, {"name", r.name}, {"command", r.command}, {"tags", r.tags},
          {"pp", r.pp}, {"mp", r.mp}, {"dp", r.dp}, {"stages", r.stages}, {"micro_batches", r.micro_batches},
          {"machines", r.machines}, {"workers", r.workers}, {"jobs", r.jobs}, {"schedule", r.schedule},
          {"steps", r.steps}, {"step_us", r.step_us}, {"bubble", r.bubble}, {"ideal_bubble", Opt(r.ideal_bubble)},
          {"top_cause", r.top_cause}, {"top_what_if", r.top_what_if}, {"top_gain", r.top_gain},
          {"stop_kind", r.stop_kind}, {"stop_sentence", r.stop_sentence}, {"stop_step", Opt(r.stop_step)},
          {"stop_host", r.stop_host}, {"stop_gpu", Opt(r.stop_gpu)}, {"stop_rank", Opt(r.stop_rank)},
          {"step_rows", steps}, {"worker_rows", workers}, {"what_ifs", what_ifs}};
}

std::optional<RunRecord> RunFromJson(const json& j, std::string* error) {
  if (!j.is_object() || !j.contains("jobviz_run")) {
    *error = "not a jobviz run file (no \"jobviz_run\")";
    return std::nullopt;
  }
  if (j.at("jobviz_run").get<int>() > kRunFileVersion) {
    *error = "written by a newer jobviz (run file version " + j.at("jobviz_run").dump() + ")";
    return std::nullopt;
  }
  try {
    RunRecord r;
    r.identity = j.at("identity").get<std::string>();
    r.recorded_at = j.at("recorded_at").get<std::int64_t>();
    r.started_at = j.value("started_at", std::int64_t{0});
    r.name = j.at("name").get<std::string>();
    r.command = j.value("command", "");
    r.tags = j.value("tags", std::map<std::string, std::string>{});
    r.pp = j.value("pp", 1), r.mp = j.value("mp", 1), r.dp = j.value("dp", 1);
    r.stages = j.value("stages", 0), r.micro_batches = j.value("micro_batches", 0);
    r.machines = j.value("machines", size_t{0}), r.workers = j.value("workers", size_t{0}), r.jobs = j.value("jobs", size_t{0});
    r.schedule = j.value("schedule", "");
    r.steps = j.value("steps", size_t{0});
    r.step_us = j.value("step_us", 0.0), r.bubble = j.value("bubble", 0.0), r.ideal_bubble = OptOf<double>(j, "ideal_bubble");
    r.top_cause = j.value("top_cause", ""), r.top_what_if = j.value("top_what_if", ""), r.top_gain = j.value("top_gain", 0.0);
    r.stop_kind = j.value("stop_kind", "finished"), r.stop_sentence = j.value("stop_sentence", "");
    r.stop_step = OptOf<std::int64_t>(j, "stop_step");
    r.stop_host = j.value("stop_host", ""), r.stop_gpu = OptOf<int>(j, "stop_gpu"), r.stop_rank = OptOf<std::int64_t>(j, "stop_rank");
    for (const json& s : j.at("step_rows")) r.step_rows.push_back({s.at(0).get<std::int64_t>(), {s.at(1).get<double>(), s.at(2).get<double>()}});
    for (const json& w : j.at("worker_rows")) r.worker_rows.push_back(WorkerFromJson(w));
    for (const json& w : j.at("what_ifs"))
      r.what_ifs.push_back({w.at("key").get<std::string>(), w.value("applies", false), w.value("gain", 0.0), w.value("saved_us", 0.0)});
    return r;
  } catch (const json::exception& e) {
    *error = std::string("a field is missing or of the wrong type: ") + e.what();
    return std::nullopt;
  }
}

std::optional<WrittenRun> WriteRunFile(const std::string& dir, const RunRecord& record, std::string* error) {
  WrittenRun written{(fs::path(dir) / (record.identity + ".json")).string(), false};
  std::error_code ec;
  if (fs::exists(written.path, ec)) {
    written.already = true;
    return written;
  }
  AtomicFile file;  // a temporary file renamed into place: a reader never sees half a run
  if (file.Open(written.path)) {
    file.Write(RunToJson(record).dump() + "\n");
    if (file.Commit()) return written;
  }
  *error = file.error();
  return std::nullopt;
}

bool ImportRunFiles(const std::string& dir, LedgerDb& db, size_t* added, size_t* files, LedgerError* error) {
  std::vector<fs::path> paths;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".json" && entry.is_regular_file()) paths.push_back(entry.path());
  if (ec) {
    *error = {LedgerProblem::kCannotOpen, dir + ": " + ec.message(), "give the directory that --record DIR wrote"};
    return false;
  }
  std::sort(paths.begin(), paths.end());
  std::vector<RunRecord> runs;
  for (const fs::path& path : paths) {  // every file read and checked before any is stored
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    std::string why;
    const json doc = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    auto run = doc.is_discarded() ? std::nullopt : RunFromJson(doc, &why);
    if (!run) {
      *error = {LedgerProblem::kNotALedger, path.string() + ": " + (doc.is_discarded() ? "not JSON" : why),
                "remove it, or give the directory that --record DIR wrote"};
      return false;
    }
    runs.push_back(std::move(*run));
  }
  *files = runs.size();
  *added = 0;
  for (const RunRecord& run : runs) {
    const auto stored = StoreRun(db, run, error);
    if (!stored) return false;
    *added += !stored->already;
  }
  return true;
}

}  // namespace jobviz
