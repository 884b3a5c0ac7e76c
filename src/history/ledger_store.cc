#include "history/ledger_store.h"

#include <algorithm>
#include <cmath>
#include <memory>

namespace jobviz {

namespace {

template <typename T>
LedgerValue Value(const std::optional<T>& value) {
  if (!value) return std::monostate{};
  if constexpr (std::is_floating_point_v<T>) return static_cast<double>(*value);
  else return static_cast<std::int64_t>(*value);
}
LedgerValue Int(std::int64_t value) { return value; }
LedgerValue Text(const std::string& text) { return text; }

std::int64_t IntOf(const LedgerValue& v, std::int64_t otherwise = 0) {
  if (const auto* n = std::get_if<std::int64_t>(&v)) return *n;
  if (const auto* d = std::get_if<double>(&v)) return static_cast<std::int64_t>(*d);
  return otherwise;
}
double RealOf(const LedgerValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* n = std::get_if<std::int64_t>(&v)) return static_cast<double>(*n);
  return 0;
}
std::string TextOf(const LedgerValue& v) {
  const auto* s = std::get_if<std::string>(&v);
  return s ? *s : "";
}
template <typename T>
std::optional<T> OptionalOf(const LedgerValue& v) {
  if (std::holds_alternative<std::monostate>(v)) return std::nullopt;
  if constexpr (std::is_floating_point_v<T>) return RealOf(v);
  else return static_cast<T>(IntOf(v));
}

bool InsertRun(LedgerDb& db, const RunRecord& r, LedgerError* error) {
  return db.Query(
      "INSERT INTO runs (identity, recorded_at, started_at, name, command, pp, mp, dp, stages, micro_batches, machines, "
      "workers, jobs, schedule, steps, step_us, bubble, ideal_bubble, top_cause, top_what_if, top_gain, stop_kind, "
      "stop_sentence, stop_step, stop_host, stop_gpu, stop_rank) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
      "?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27)",
      {Text(r.identity), Int(r.recorded_at), Int(r.started_at), Text(r.name), Text(r.command), Int(r.pp), Int(r.mp),
       Int(r.dp), Int(r.stages), Int(r.micro_batches), Int(static_cast<std::int64_t>(r.machines)),
       Int(static_cast<std::int64_t>(r.workers)), Int(static_cast<std::int64_t>(r.jobs)), Text(r.schedule),
       Int(static_cast<std::int64_t>(r.steps)), r.step_us, r.bubble, Value(r.ideal_bubble), Text(r.top_cause),
       Text(r.top_what_if), r.top_gain, Text(r.stop_kind), Text(r.stop_sentence), Value(r.stop_step),
       Text(r.stop_host), Value(r.stop_gpu), Value(r.stop_rank)},
      nullptr, error);
}

// The id of each (host, machine directory) of the run, added to `hosts` when new.
bool HostIds(LedgerDb& db, const RunRecord& r, std::map<std::pair<std::string, std::string>, std::int64_t>* ids,
             LedgerError* error) {
  LedgerDb::Statement add(db, "INSERT OR IGNORE INTO hosts (host, machine_dir) VALUES (?1, ?2)", error);
  LedgerDb::Statement find(db, "SELECT id FROM hosts WHERE host = ?1 AND machine_dir = ?2", error);
  if (!add.ok() || !find.ok()) return false;
  for (const RecordedWorker& w : r.worker_rows) {
    const auto added = ids->try_emplace({w.host, w.machine_dir}, 0);
    if (!added.second) continue;
    std::int64_t& id = added.first->second;  // (clang 14 captures no structured binding)
    if (!add.Run({w.host, w.machine_dir}, nullptr, error) ||
        !find.Run({w.host, w.machine_dir}, [&id](const std::vector<LedgerValue>& row) { id = IntOf(row[0]); }, error))
      return false;
  }
  return true;
}

bool InsertDetails(LedgerDb& db, std::int64_t run, const RunRecord& r, LedgerError* error) {
  LedgerDb::Statement tag(db, "INSERT INTO tags (run, key, value) VALUES (?1, ?2, ?3)", error);
  if (!tag.ok()) return false;
  for (const auto& [key, value] : r.tags)
    if (!tag.Run({run, key, value}, nullptr, error)) return false;
  LedgerDb::Statement step(db, "INSERT INTO steps (run, step, duration_us, bubble) VALUES (?1, ?2, ?3, ?4)", error);
  if (!step.ok()) return false;
  for (const auto& [number, values] : r.step_rows)
    if (!step.Run({run, number, values.first, values.second}, nullptr, error)) return false;
  LedgerDb::Statement what_if(db, "INSERT INTO what_ifs (run, key, applies, gain, saved_us) VALUES (?1, ?2, ?3, ?4, ?5)", error);
  if (!what_if.ok()) return false;
  for (const RecordedWhatIf& w : r.what_ifs)
    if (!what_if.Run({run, w.key, Int(w.applies), w.gain, w.saved_us}, nullptr, error)) return false;
  std::map<std::pair<std::string, std::string>, std::int64_t> host_ids;
  if (!HostIds(db, r, &host_ids, error)) return false;
  LedgerDb::Statement worker(db,
                             "INSERT INTO workers (run, host_id, gpu, rank, stage, mp, replica, busy_us, idle_us, speed, "
                             "slow_factor, cost_us, score, first_stop) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
                             "?11, ?12, ?13, ?14)",
                             error);
  if (!worker.ok()) return false;
  std::map<std::int64_t, std::uint64_t> gpu_masks;  // host id -> its GPUs in this run
  std::vector<LedgerValue> args(14);  // one vector for every row (and no initializer list: GCC 12 warns falsely on it)
  for (const RecordedWorker& w : r.worker_rows) {
    const std::int64_t host = host_ids.at({w.host, w.machine_dir});
    gpu_masks[host] |= std::uint64_t{1} << std::clamp(w.gpu, 0, 63);
    args[0] = run, args[1] = host, args[2] = Int(w.gpu), args[3] = Value(w.rank), args[4] = Value(w.stage);
    args[5] = Int(w.mp), args[6] = Int(w.replica), args[7] = Int(std::llround(w.busy_us));
    args[8] = Int(std::llround(w.idle_us)), args[9] = Value(w.speed), args[10] = Value(w.slow_factor);
    args[11] = w.cost_us, args[12] = w.score, args[13] = Int(w.first_stop);
    if (!worker.Run(args, nullptr, error)) return false;
  }
  LedgerDb::Statement host_run(db, "INSERT INTO host_runs (host_id, run, gpu_mask) VALUES (?1, ?2, ?3)", error);
  if (!host_run.ok()) return false;
  for (const auto& [host, mask] : gpu_masks)
    if (!host_run.Run({host, run, static_cast<std::int64_t>(mask)}, nullptr, error)) return false;
  return true;
}

constexpr const char* kWorkerColumns =
    "SELECT w.run, runs.name, h.host, h.machine_dir, w.gpu, w.rank, w.stage, w.mp, w.replica, w.busy_us, w.idle_us, "
    "w.speed, w.slow_factor, w.cost_us, w.score, w.first_stop";

LedgerWorker WorkerOf(const std::vector<LedgerValue>& v) {
  LedgerWorker row;
  row.run = IntOf(v[0]);
  row.run_name = TextOf(v[1]);
  RecordedWorker& w = row.worker;
  w.host = TextOf(v[2]), w.machine_dir = TextOf(v[3]), w.gpu = static_cast<int>(IntOf(v[4]));
  w.rank = OptionalOf<std::int64_t>(v[5]), w.stage = OptionalOf<int>(v[6]);
  w.mp = static_cast<int>(IntOf(v[7])), w.replica = static_cast<int>(IntOf(v[8]));
  w.busy_us = RealOf(v[9]), w.idle_us = RealOf(v[10]), w.speed = OptionalOf<double>(v[11]);
  w.slow_factor = OptionalOf<double>(v[12]), w.cost_us = RealOf(v[13]), w.score = RealOf(v[14]);
  w.first_stop = IntOf(v[15]) != 0;
  return row;
}

// "WHERE ..." for `filter`, its arguments appended to `args`.
std::string Where(const RunFilter& filter, std::vector<LedgerValue>& args) {
  std::string where = " WHERE 1";
  if (!filter.name.empty()) {
    args.push_back(filter.name);
    where += " AND runs.name = ?" + std::to_string(args.size());
  }
  if (filter.since) {
    args.push_back(*filter.since);
    where += " AND coalesce(runs.started_at, runs.recorded_at) >= ?" + std::to_string(args.size());
  }
  for (const auto& [key, value] : filter.tags) {
    args.push_back(key);
    args.push_back(value);
    where += " AND EXISTS (SELECT 1 FROM tags WHERE tags.run = runs.id AND tags.key = ?" + std::to_string(args.size() - 1) +
             " AND tags.value = ?" + std::to_string(args.size()) + ")";
  }
  return where;
}

}  // namespace

std::optional<StoredRun> StoreRun(LedgerDb& db, const RunRecord& record, LedgerError* error, const std::string& replacing) {
  LedgerTransaction transaction(db, error);
  if (!transaction.ok()) return std::nullopt;
  if (!replacing.empty() && replacing != record.identity &&
      !db.Query("DELETE FROM runs WHERE identity = ?1", {replacing}, nullptr, error))  // its rows go with it (CASCADE)
    return std::nullopt;
  std::optional<std::int64_t> existing;
  if (!db.Query("SELECT id FROM runs WHERE identity = ?1", {record.identity},
                [&](const std::vector<LedgerValue>& row) { existing = IntOf(row[0]); }, error))
    return std::nullopt;
  if (existing) {  // nothing written (but what it replaces removed)
    if (!replacing.empty() && !transaction.Commit(error)) return std::nullopt;
    return StoredRun{*existing, true};
  }
  if (!InsertRun(db, record, error)) return std::nullopt;
  const std::int64_t run = db.LastInsertId();
  if (!InsertDetails(db, run, record, error) || !transaction.Commit(error)) return std::nullopt;
  return StoredRun{run, false};
}

bool AddStepRow(LedgerDb& db, const std::string& identity, std::int64_t step, double duration_us, double bubble,
                size_t steps, double step_us, double run_bubble, LedgerError* error) {
  LedgerTransaction transaction(db, error);
  return transaction.ok() &&
         db.Query("INSERT OR REPLACE INTO steps (run, step, duration_us, bubble) SELECT id, ?2, ?3, ?4 FROM runs WHERE identity = ?1",
                  {identity, step, duration_us, bubble}, nullptr, error) &&
         db.Query("UPDATE runs SET steps = ?2, step_us = ?3, bubble = ?4, stop_kind = 'running', "
                  "stop_sentence = 'jobviz follow is following it' WHERE identity = ?1",
                  {identity, static_cast<std::int64_t>(steps), step_us, run_bubble}, nullptr, error) &&
         transaction.Commit(error);
}

std::optional<std::vector<LedgerRun>> LoadRuns(LedgerDb& db, const RunFilter& filter, LedgerError* error) {
  std::vector<LedgerRun> runs;
  if (db.empty()) return runs;
  std::vector<LedgerValue> args;
  const std::string sql =
      "SELECT id, identity, recorded_at, started_at, name, command, pp, mp, dp, stages, micro_batches, machines, workers, "
      "jobs, schedule, steps, step_us, bubble, ideal_bubble, top_cause, top_what_if, top_gain, stop_kind, stop_sentence, "
      "stop_step, stop_host, stop_gpu, stop_rank FROM runs" +
      Where(filter, args) + " ORDER BY coalesce(started_at, recorded_at), recorded_at, id";
  const bool read = db.Query(sql, args, [&](const std::vector<LedgerValue>& v) {
    LedgerRun& run = runs.emplace_back();
    run.id = IntOf(v[0]);
    RunRecord& r = run.record;
    r.identity = TextOf(v[1]);
    r.recorded_at = IntOf(v[2]);
    r.started_at = IntOf(v[3]);
    r.name = TextOf(v[4]);
    r.command = TextOf(v[5]);
    r.pp = static_cast<int>(IntOf(v[6], 1)), r.mp = static_cast<int>(IntOf(v[7], 1)), r.dp = static_cast<int>(IntOf(v[8], 1));
    r.stages = static_cast<int>(IntOf(v[9])), r.micro_batches = static_cast<int>(IntOf(v[10]));
    r.machines = static_cast<size_t>(IntOf(v[11])), r.workers = static_cast<size_t>(IntOf(v[12]));
    r.jobs = static_cast<size_t>(IntOf(v[13]));
    r.schedule = TextOf(v[14]);
    r.steps = static_cast<size_t>(IntOf(v[15]));
    r.step_us = RealOf(v[16]), r.bubble = RealOf(v[17]), r.ideal_bubble = OptionalOf<double>(v[18]);
    r.top_cause = TextOf(v[19]), r.top_what_if = TextOf(v[20]), r.top_gain = RealOf(v[21]);
    r.stop_kind = TextOf(v[22]), r.stop_sentence = TextOf(v[23]), r.stop_step = OptionalOf<std::int64_t>(v[24]);
    r.stop_host = TextOf(v[25]), r.stop_gpu = OptionalOf<int>(v[26]), r.stop_rank = OptionalOf<std::int64_t>(v[27]);
  }, error);
  if (!read) return std::nullopt;
  if (runs.empty()) return runs;
  // Tags of the runs read: one query, matched by id.
  std::map<std::int64_t, RunRecord*> by_id;
  for (LedgerRun& run : runs) by_id[run.id] = &run.record;
  if (!db.Query("SELECT run, key, value FROM tags", {}, [&](const std::vector<LedgerValue>& v) {
        if (const auto it = by_id.find(IntOf(v[0])); it != by_id.end()) it->second->tags[TextOf(v[1])] = TextOf(v[2]);
      }, error))
    return std::nullopt;
  if (!db.Query("SELECT run, key, applies, gain, saved_us FROM what_ifs", {}, [&](const std::vector<LedgerValue>& v) {
        if (const auto it = by_id.find(IntOf(v[0])); it != by_id.end())
          it->second->what_ifs.push_back({TextOf(v[1]), IntOf(v[2]) != 0, RealOf(v[3]), RealOf(v[4])});
      }, error))
    return std::nullopt;
  return runs;
}

std::optional<std::vector<LedgerWorker>> LoadWorkers(LedgerDb& db, const RunFilter& filter, LedgerError* error) {
  std::vector<LedgerWorker> workers;
  if (db.empty()) return workers;
  std::vector<LedgerValue> args;
  const std::string sql =
      std::string(kWorkerColumns) + " FROM workers AS w JOIN hosts AS h ON h.id = w.host_id JOIN runs ON runs.id = w.run" +
      Where(filter, args);
  if (!db.Query(sql, args, [&](const std::vector<LedgerValue>& v) { workers.push_back(WorkerOf(v)); }, error)) return std::nullopt;
  return workers;
}

std::optional<HostFacts> LoadHostFacts(LedgerDb& db, const RunFilter& filter, LedgerError* error) {
  HostFacts facts;
  if (db.empty()) return facts;
  std::vector<LedgerValue> args;
  std::string where = Where(filter, args);
  // The slow and first-to-stop workers, through their partial index (workers_notable).
  const std::string notable = std::string(kWorkerColumns) +
                              " FROM workers AS w JOIN hosts AS h ON h.id = w.host_id JOIN runs ON runs.id = w.run" + where +
                              " AND (w.slow_factor IS NOT NULL OR w.first_stop = 1)";
  if (!db.Query(notable, args, [&](const std::vector<LedgerValue>& v) { facts.notable.push_back(WorkerOf(v)); }, error))
    return std::nullopt;
  if (!db.Query("SELECT runs.name, count(*) FROM runs" + where + " GROUP BY runs.name", args,
                [&](const std::vector<LedgerValue>& v) {
                  facts.runs_of_name[TextOf(v[0])] = static_cast<size_t>(IntOf(v[1]));
                  facts.runs += static_cast<size_t>(IntOf(v[1]));
                },
                error))
    return std::nullopt;
  // Runs a host (or a GPU of it: its bit in gpu_mask) took part in: its host_runs rows, by their key.
  std::vector<LedgerValue> counted = {std::string(), std::int64_t{-1}};
  const std::string took_part =
      "SELECT count(DISTINCT hr.run) FROM host_runs AS hr JOIN hosts AS h ON h.id = hr.host_id JOIN runs ON runs.id = hr.run" +
      Where(filter, counted) + " AND h.host = ?1 AND (?2 < 0 OR (hr.gpu_mask >> min(?2, 63)) & 1)";
  auto statement = std::make_shared<LedgerDb::Statement>(db, took_part, error);
  if (!statement->ok()) return std::nullopt;
  facts.took_part = [statement, counted](const std::string& host, std::optional<int> gpu) mutable {
    counted[0] = host;
    counted[1] = static_cast<std::int64_t>(gpu.value_or(-1));
    size_t runs = 0;
    LedgerError ignored;  // read in the same snapshot as the facts above: it does not fail where they did not
    statement->Run(counted, [&](const std::vector<LedgerValue>& v) { runs = static_cast<size_t>(IntOf(v[0])); }, &ignored);
    return runs;
  };
  return facts;
}

}  // namespace jobviz
