#include "history/ledger_db.h"

#include <sqlite3.h>

#include <array>
#include <filesystem>

namespace jobviz {

namespace {

// Schema migrations: kMigrations[v] takes a ledger from version v to v + 1
// (version 0: an empty file). A new version appends one entry and raises
// kLedgerSchema; nothing is ever edited in place (docs/history.md).
constexpr std::array<std::string_view, kLedgerSchema> kMigrations = {
    R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  identity TEXT NOT NULL UNIQUE,   -- the logs' content (history/run_record.h)
  recorded_at INTEGER NOT NULL,    -- unix seconds
  started_at INTEGER,              -- the run's first job, unix seconds
  name TEXT NOT NULL,
  command TEXT NOT NULL,
  pp INTEGER, mp INTEGER, dp INTEGER,
  stages INTEGER, micro_batches INTEGER, machines INTEGER, workers INTEGER, jobs INTEGER,
  schedule TEXT,
  steps INTEGER, step_us REAL, bubble REAL, ideal_bubble REAL,
  top_cause TEXT, top_what_if TEXT, top_gain REAL,
  stop_kind TEXT, stop_sentence TEXT, stop_step INTEGER,
  stop_host TEXT, stop_gpu INTEGER, stop_rank INTEGER
);
CREATE INDEX runs_by_time ON runs (started_at, recorded_at);
CREATE INDEX runs_by_name ON runs (name);
CREATE TABLE tags (
  run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (run, key)
) WITHOUT ROWID;
CREATE TABLE steps (
  run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  step INTEGER NOT NULL, duration_us REAL, bubble REAL,
  PRIMARY KEY (run, step)
) WITHOUT ROWID;
CREATE TABLE workers (
  run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  host TEXT NOT NULL, machine_dir TEXT NOT NULL, gpu INTEGER NOT NULL,
  rank INTEGER, stage INTEGER, mp INTEGER, replica INTEGER,
  busy_us REAL, idle_us REAL, speed REAL,
  slow_factor REAL,                -- NULL: not a slow worker
  cost_us REAL NOT NULL,           -- its share of the no-slow-workers what-if's gain, per step
  score REAL NOT NULL,             -- cost_us over the run's step time
  first_stop INTEGER NOT NULL,
  PRIMARY KEY (run, machine_dir, gpu)
) WITHOUT ROWID;
CREATE INDEX workers_by_host ON workers (host);
CREATE TABLE what_ifs (
  run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  key TEXT NOT NULL, applies INTEGER, gain REAL, saved_us REAL,
  PRIMARY KEY (run, key)
) WITHOUT ROWID;
)sql",
    // 2: hosts named once (workers.host_id), times in whole microseconds, a
    // row a host a run (host_runs: which runs a host or GPU took part in,
    // without reading every worker), the slow and first-to-stop workers
    // indexed apart (what `jobviz hosts` reads of 20 M rows).
    R"sql(
CREATE TABLE hosts (
  id INTEGER PRIMARY KEY,
  host TEXT NOT NULL, machine_dir TEXT NOT NULL,
  UNIQUE (host, machine_dir)
);
INSERT INTO hosts (host, machine_dir) SELECT DISTINCT host, machine_dir FROM workers;
CREATE TABLE workers_2 (
  run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  host_id INTEGER NOT NULL REFERENCES hosts (id),
  gpu INTEGER NOT NULL,
  rank INTEGER, stage INTEGER, mp INTEGER, replica INTEGER,
  busy_us INTEGER, idle_us INTEGER,
  speed REAL,
  slow_factor REAL,                -- NULL: not a slow worker
  cost_us REAL NOT NULL,           -- its share of the no-slow-workers what-if's gain, per step
  score REAL NOT NULL,             -- cost_us over the run's step time
  first_stop INTEGER NOT NULL,
  PRIMARY KEY (run, host_id, gpu)
) WITHOUT ROWID;
INSERT INTO workers_2
  SELECT w.run, h.id, w.gpu, w.rank, w.stage, w.mp, w.replica, CAST(round(w.busy_us) AS INTEGER),
         CAST(round(w.idle_us) AS INTEGER), w.speed, w.slow_factor, w.cost_us, w.score, w.first_stop
  FROM workers AS w JOIN hosts AS h ON h.host = w.host AND h.machine_dir = w.machine_dir;
DROP TABLE workers;
ALTER TABLE workers_2 RENAME TO workers;
CREATE INDEX workers_notable ON workers (run) WHERE slow_factor IS NOT NULL OR first_stop = 1;
CREATE TABLE host_runs (
  host_id INTEGER NOT NULL REFERENCES hosts (id),
  run INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  gpu_mask INTEGER NOT NULL,       -- bit g: its GPU g took part (bit 63: any from 63 up)
  PRIMARY KEY (host_id, run)
) WITHOUT ROWID;
INSERT INTO host_runs SELECT host_id, run, sum(DISTINCT 1 << min(gpu, 63)) FROM workers GROUP BY host_id, run;
)sql",
};

const char* ProblemHint(LedgerProblem problem) {
  switch (problem) {
    case LedgerProblem::kCannotOpen: return "check that the directory exists and is writable";
    case LedgerProblem::kNotALedger: return "give a file that --record created, or a new path";
    case LedgerProblem::kNewerSchema: return "use the jobviz that wrote it (or a newer one)";
    case LedgerProblem::kBusy:
      return "another jobviz holds the ledger; on NFS or Lustre SQLite's locks do not work: use --record DIR "
             "(docs/history.md)";
    case LedgerProblem::kFull: return "free space on its disk; nothing of this run was written";
    case LedgerProblem::kCorrupt: return "restore it from a copy; sqlite3 FILE '.recover' saves what it can";
    case LedgerProblem::kOther: break;
  }
  return "";
}

}  // namespace

std::string_view LedgerMigration(int from) { return kMigrations.at(static_cast<size_t>(from)); }

LedgerError LedgerDb::ErrorOf(int code, std::string_view what) const {
  LedgerError error;
  switch (code & 0xff) {
    case SQLITE_NOTADB: error.problem = LedgerProblem::kNotALedger; break;
    case SQLITE_BUSY:
    case SQLITE_LOCKED: error.problem = LedgerProblem::kBusy; break;
    case SQLITE_FULL: error.problem = LedgerProblem::kFull; break;
    case SQLITE_CORRUPT: error.problem = LedgerProblem::kCorrupt; break;
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY: error.problem = LedgerProblem::kCannotOpen; break;
    default: break;
  }
  const char* detail = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(code);
  error.message = path_ + ": " + std::string(what) + ": " + detail;
  error.hint = ProblemHint(error.problem);
  return error;
}

std::optional<LedgerDb> LedgerDb::Open(const std::string& path, bool for_writing, LedgerError* error,
                                       int busy_timeout_ms) {
  std::error_code ec;
  if (!for_writing && !std::filesystem::exists(path, ec)) {
    *error = {LedgerProblem::kCannotOpen, path + ": no such ledger", "record a run into it first: jobviz ... --record " + path};
    return std::nullopt;
  }
  sqlite3* raw = nullptr;
  const int flags = for_writing ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
  const int code = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  LedgerDb db(raw, path);
  if (code != SQLITE_OK) {
    *error = db.ErrorOf(code, "cannot open");
    return std::nullopt;
  }
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  sqlite3_extended_result_codes(raw, 1);
  // A reader sees one snapshot from its first read to its close: its checks
  // and everything it loads are of one state of the ledger, however many
  // writers commit meanwhile (WAL keeps the snapshot; writers do not wait).
  if (!for_writing && !db.Exec("BEGIN", error)) return std::nullopt;
  db.reading_ = !for_writing;
  if (!db.CheckAndMigrate(for_writing, error)) return std::nullopt;
  return db;
}

LedgerDb::LedgerDb(LedgerDb&& other) noexcept
    : db_(other.db_), path_(std::move(other.path_)), empty_(other.empty_), reading_(other.reading_) {
  other.db_ = nullptr;
}

LedgerDb::~LedgerDb() {
  if (!db_) return;
  if (reading_) sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);  // the reader's snapshot: nothing to write
  sqlite3_close_v2(db_);
}

bool LedgerDb::CheckAndMigrate(bool for_writing, LedgerError* error) {
  std::int64_t application_id = 0, version = 0, objects = 0;
  const auto one = [](std::int64_t* out) {
    return [out](const std::vector<LedgerValue>& row) { *out = std::get<std::int64_t>(row.at(0)); };
  };
  // One statement, so one snapshot: read one by one, the three could
  // straddle another writer's commit of a new ledger's schema (the id read
  // before it, the tables after) and call a jobviz ledger something else.
  // The first read of a file that is not SQLite fails here (SQLITE_NOTADB).
  if (!Query("SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM pragma_user_version), "
             "(SELECT count(*) FROM sqlite_schema)",
             {},
             [&](const std::vector<LedgerValue>& row) {
               application_id = std::get<std::int64_t>(row.at(0));
               version = std::get<std::int64_t>(row.at(1));
               objects = std::get<std::int64_t>(row.at(2));
             },
             error)) {
    if (error->problem == LedgerProblem::kNotALedger) error->message = path_ + ": not a jobviz ledger (not an SQLite database)";
    return false;
  }
  if (objects > 0 && application_id != kLedgerApplicationId) {
    *error = {LedgerProblem::kNotALedger, path_ + ": not a jobviz ledger (an SQLite database of something else)",
              ProblemHint(LedgerProblem::kNotALedger)};
    return false;
  }
  if (version > kLedgerSchema) {
    *error = {LedgerProblem::kNewerSchema,
              path_ + ": written by a newer jobviz (ledger schema " + std::to_string(version) + "; this one knows up to " +
                  std::to_string(kLedgerSchema) + ")",
              ProblemHint(LedgerProblem::kNewerSchema)};
    return false;
  }
  if (!for_writing) {
    empty_ = objects == 0;  // an empty file: no run yet
    if (empty_ || version == kLedgerSchema) return true;
    *error = {LedgerProblem::kOther, path_ + ": an older ledger schema (" + std::to_string(version) + ")",
              "record a run into it with this jobviz, which migrates it"};
    return false;
  }
  // WAL: readers go on while one writer writes, and a writer waits for the
  // lock (the busy timeout) instead of failing at once.
  if (!Exec("PRAGMA journal_mode = WAL", error) || !Exec("PRAGMA foreign_keys = ON", error)) return false;
  if (version == kLedgerSchema) return true;
  LedgerTransaction migrate(*this, error);
  if (!migrate.ok()) return false;
  // Read again under the write lock: another writer may have migrated it meanwhile.
  if (!Query("PRAGMA user_version", {}, one(&version), error)) return false;
  for (; version < kLedgerSchema; ++version)
    if (!Exec(kMigrations[static_cast<size_t>(version)], error)) return false;
  return Exec("PRAGMA application_id = " + std::to_string(kLedgerApplicationId), error) &&
         Exec("PRAGMA user_version = " + std::to_string(kLedgerSchema), error) && migrate.Commit(error);
}

bool LedgerDb::Exec(std::string_view sql, LedgerError* error) {
  char* message = nullptr;
  const int code = sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &message);
  sqlite3_free(message);
  if (code == SQLITE_OK) return true;
  *error = ErrorOf(code, "cannot write");
  return false;
}

bool LedgerDb::Query(std::string_view sql, const std::vector<LedgerValue>& args, const RowFn& row, LedgerError* error) {
  Statement statement(*this, sql, error);
  return statement.ok() && statement.Run(args, row, error);
}

LedgerDb::Statement::Statement(LedgerDb& db, std::string_view sql, LedgerError* error) : db_(db) {
  reads_ = sql.starts_with("SELECT") || sql.starts_with("PRAGMA");
  const int code = sqlite3_prepare_v2(db_.db_, sql.data(), static_cast<int>(sql.size()), &statement_, nullptr);
  if (code != SQLITE_OK) {
    *error = db_.ErrorOf(code, reads_ ? "cannot read" : "cannot write");
    sqlite3_finalize(statement_);
    statement_ = nullptr;
  }
}

LedgerDb::Statement::~Statement() { sqlite3_finalize(statement_); }

namespace {

void Bind(sqlite3_stmt* statement, const std::vector<LedgerValue>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const int at = static_cast<int>(i) + 1;
    if (const auto* n = std::get_if<std::int64_t>(&args[i])) sqlite3_bind_int64(statement, at, *n);
    else if (const auto* d = std::get_if<double>(&args[i])) sqlite3_bind_double(statement, at, *d);
    else if (const auto* s = std::get_if<std::string>(&args[i]))
      sqlite3_bind_text(statement, at, s->data(), static_cast<int>(s->size()), SQLITE_TRANSIENT);
    else sqlite3_bind_null(statement, at);
  }
}

void ReadRow(sqlite3_stmt* statement, std::vector<LedgerValue>& values) {
  values.assign(static_cast<size_t>(sqlite3_column_count(statement)), std::monostate{});
  for (size_t c = 0; c < values.size(); ++c) {
    const int column = static_cast<int>(c);
    switch (sqlite3_column_type(statement, column)) {
      case SQLITE_INTEGER: values[c] = static_cast<std::int64_t>(sqlite3_column_int64(statement, column)); break;
      case SQLITE_FLOAT: values[c] = sqlite3_column_double(statement, column); break;
      case SQLITE_TEXT:
        values[c] = std::string(reinterpret_cast<const char*>(sqlite3_column_text(statement, column)),
                                static_cast<size_t>(sqlite3_column_bytes(statement, column)));
        break;
      default: break;
    }
  }
}

}  // namespace

bool LedgerDb::Statement::Run(const std::vector<LedgerValue>& args, const RowFn& row, LedgerError* error) {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
  Bind(statement_, args);
  std::vector<LedgerValue> values;
  int code;
  while ((code = sqlite3_step(statement_)) == SQLITE_ROW)
    if (row) {
      ReadRow(statement_, values);
      row(values);
    }
  if (code == SQLITE_DONE) return true;
  *error = db_.ErrorOf(code, reads_ ? "cannot read" : "cannot write");
  return false;
}

std::int64_t LedgerDb::LastInsertId() const { return sqlite3_last_insert_rowid(db_); }

LedgerTransaction::LedgerTransaction(LedgerDb& db, LedgerError* error) : db_(db) { ok_ = db_.Exec("BEGIN IMMEDIATE", error); }

LedgerTransaction::~LedgerTransaction() {
  if (ok_ && !done_) {
    LedgerError ignored;
    db_.Exec("ROLLBACK", &ignored);
  }
}

bool LedgerTransaction::Commit(LedgerError* error) {
  done_ = true;
  if (db_.Exec("COMMIT", error)) return true;
  LedgerError ignored;
  db_.Exec("ROLLBACK", &ignored);
  return false;
}

}  // namespace jobviz
