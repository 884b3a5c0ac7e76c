#include "history/ledger_db.h"

#include <catch2/catch.hpp>
#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "history/ledger_store.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_ledger_db_test {

using namespace jobviz;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char name[] = "/tmp/jobviz-ledger-XXXXXX";
    path = mkdtemp(name);
  }
  ~TempDir() { fs::remove_all(path); }
};

RunRecord Sample(const std::string& identity, double step_us) {
  RunRecord r;
  r.identity = identity;
  r.name = "nightly";
  r.command = "jobviz";
  r.recorded_at = 1'800'000'000;
  r.started_at = 1'800'000'000;
  r.tags = {{"commit", "abc"}};
  r.steps = 2;
  r.step_us = step_us;
  r.bubble = 0.2;
  r.step_rows = {{1, {step_us, 0.2}}, {2, {step_us, 0.2}}};
  RecordedWorker w;
  w.host = "node7";
  w.machine_dir = "machine0";
  r.worker_rows = {w};
  r.what_ifs = {{"no_slow_workers", false, 0, 0}};
  return r;
}

size_t CountRuns(const std::string& path) {
  LedgerError error;
  auto db = LedgerDb::Open(path, false, &error);
  REQUIRE(db);
  auto runs = LoadRuns(*db, {}, &error);
  REQUIRE(runs);
  return runs->size();
}

void RawSql(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
}

}  // namespace

TEST_CASE("A ledger is created on first use, and the same logs recorded twice are one run") {
  TempDir dir;
  const std::string path = (dir.path / "runs.db").string();
  LedgerError error;
  auto db = LedgerDb::Open(path, true, &error);
  REQUIRE(db);
  auto first = StoreRun(*db, Sample("aaaa", 100), &error);
  REQUIRE(first);
  CHECK_FALSE(first->already);
  auto again = StoreRun(*db, Sample("aaaa", 100), &error);
  REQUIRE(again);
  CHECK(again->already);
  CHECK(again->id == first->id);
  REQUIRE(StoreRun(*db, Sample("bbbb", 120), &error));
  CHECK(CountRuns(path) == 2);
  // Read back as written.
  auto reader = LedgerDb::Open(path, false, &error);
  REQUIRE(reader);
  auto runs = LoadRuns(*reader, {}, &error);
  REQUIRE(runs);
  CHECK(runs->at(1).record.step_us == 120);
  CHECK(runs->at(0).record.tags.at("commit") == "abc");
  auto workers = LoadWorkers(*reader, {}, &error);
  REQUIRE(workers);
  CHECK(workers->size() == 2);
  CHECK(workers->at(0).worker.host == "node7");
}

TEST_CASE("Filters by name, tag and start") {
  TempDir dir;
  const std::string path = (dir.path / "runs.db").string();
  LedgerError error;
  auto db = LedgerDb::Open(path, true, &error);
  REQUIRE(db);
  RunRecord other = Sample("cccc", 90);
  other.name = "other";
  other.tags = {{"commit", "def"}};
  other.started_at = 1'900'000'000;
  REQUIRE(StoreRun(*db, Sample("aaaa", 100), &error));
  REQUIRE(StoreRun(*db, other, &error));
  const auto count = [&](const RunFilter& filter) {
    auto runs = LoadRuns(*db, filter, &error);
    REQUIRE(runs);
    return runs->size();
  };
  CHECK(count({}) == 2);
  CHECK(count({{}, std::nullopt, "other"}) == 1);
  CHECK(count({{{"commit", "abc"}}, std::nullopt, ""}) == 1);
  CHECK(count({{{"commit", "zzz"}}, std::nullopt, ""}) == 0);
  CHECK(count({{}, 1'850'000'000, ""}) == 1);
}

TEST_CASE("A ledger of schema 1 is migrated by the first writer, its runs and workers kept") {
  TempDir dir;
  const std::string path = (dir.path / "old.db").string();
  {  // schema 1 as a jobviz of then wrote it: one run of two workers on one host, one slow
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, std::string(LedgerMigration(0)).c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
    const char* rows =
        "INSERT INTO runs (id, identity, recorded_at, started_at, name, command, steps, step_us, bubble, stop_kind) "
        "VALUES (1, 'old', 1, 1, 'nightly', 'jobviz', 2, 100.0, 0.2, 'finished');"
        "INSERT INTO workers VALUES (1, 'node7', 'machine0', 0, 0, 0, 0, 0, 10.4, 2.6, 1.0, NULL, 0, 0, 0);"
        "INSERT INTO workers VALUES (1, 'node7', 'machine0', 1, 1, 1, 0, 0, 9.0, 4.0, 0.8, 1.3, 25.0, 0.25, 0);"
        "PRAGMA user_version = 1; PRAGMA application_id = 1245861466;";
    REQUIRE(sqlite3_exec(db, rows, nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
  }
  LedgerError error;
  {
    auto reader = LedgerDb::Open(path, false, &error);  // a reader does not migrate: it says so
    CHECK_FALSE(reader);
    CHECK(error.hint.find("migrates") != std::string::npos);
  }
  auto db = LedgerDb::Open(path, true, &error);
  REQUIRE(db);
  std::int64_t version = 0;
  REQUIRE(db->Query("PRAGMA user_version", {}, [&](const std::vector<LedgerValue>& row) { version = std::get<std::int64_t>(row[0]); }, &error));
  CHECK(version == kLedgerSchema);
  auto workers = LoadWorkers(*db, {}, &error);
  REQUIRE(workers);
  REQUIRE(workers->size() == 2);
  CHECK(workers->at(1).worker.host == "node7");
  CHECK(workers->at(1).worker.slow_factor == 1.3);
  CHECK(workers->at(0).worker.busy_us == 10);  // whole microseconds since schema 2
  auto facts = LoadHostFacts(*db, {}, &error);
  REQUIRE(facts);
  CHECK(facts->notable.size() == 1);
  CHECK(facts->took_part("node7", std::nullopt) == 1);
  CHECK(facts->took_part("node7", 1) == 1);
  CHECK(facts->took_part("node7", 5) == 0);
  REQUIRE(StoreRun(*db, Sample("new", 100), &error));  // and it takes new runs
  CHECK(CountRuns(path) == 2);
}

TEST_CASE("What is not a jobviz ledger, or is one of a newer schema, is refused and left alone") {
  TempDir dir;
  LedgerError error;
  const std::string text = (dir.path / "notes.txt").string();
  std::ofstream(text) << "these are not the runs you are looking for\n";
  for (bool writing : {false, true}) {
    CHECK_FALSE(LedgerDb::Open(text, writing, &error));
    CHECK(error.problem == LedgerProblem::kNotALedger);
  }
  std::ifstream in(text);
  CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == "these are not the runs you are looking for\n");

  const std::string other = (dir.path / "other.db").string();
  RawSql(other, "CREATE TABLE mine (x INTEGER)");
  CHECK_FALSE(LedgerDb::Open(other, true, &error));
  CHECK(error.problem == LedgerProblem::kNotALedger);
  CHECK(error.message.find("something else") != std::string::npos);

  const std::string newer = (dir.path / "newer.db").string();
  {
    auto db = LedgerDb::Open(newer, true, &error);
    REQUIRE(db);
    REQUIRE(StoreRun(*db, Sample("aaaa", 100), &error));
  }
  RawSql(newer, "PRAGMA user_version = 99");
  for (bool writing : {false, true}) {
    CHECK_FALSE(LedgerDb::Open(newer, writing, &error));
    CHECK(error.problem == LedgerProblem::kNewerSchema);
    CHECK(error.message.find("schema 99") != std::string::npos);
  }
  CHECK_FALSE(LedgerDb::Open((dir.path / "missing.db").string(), false, &error));
  CHECK(error.problem == LedgerProblem::kCannotOpen);
  CHECK_FALSE(fs::exists(dir.path / "missing.db"));  // a reader never creates one
  CHECK_FALSE(LedgerDb::Open((dir.path / "no/such/dir/runs.db").string(), true, &error));
  CHECK(error.problem == LedgerProblem::kCannotOpen);
}

TEST_CASE("A record that fails part-way leaves the ledger as it was") {
  TempDir dir;
  const std::string path = (dir.path / "runs.db").string();
  LedgerError error;
  auto db = LedgerDb::Open(path, true, &error);
  REQUIRE(db);
  REQUIRE(StoreRun(*db, Sample("aaaa", 100), &error));
  // Two workers of one machine directory and GPU: the second insert fails
  // after the run's row and the first worker's were written.
  RunRecord broken = Sample("bbbb", 100);
  broken.worker_rows.push_back(broken.worker_rows[0]);
  CHECK_FALSE(StoreRun(*db, broken, &error));
  CHECK(CountRuns(path) == 1);
  auto workers = LoadWorkers(*db, {}, &error);
  REQUIRE(workers);
  CHECK(workers->size() == 1);
}

TEST_CASE("A ledger that cannot grow (a full disk) says so and keeps what it had") {
  TempDir dir;
  const std::string path = (dir.path / "runs.db").string();
  LedgerError error;
  auto db = LedgerDb::Open(path, true, &error);
  REQUIRE(db);
  REQUIRE(StoreRun(*db, Sample("aaaa", 100), &error));
  // SQLite's own limit on the file's pages fails a write as a full disk does (SQLITE_FULL).
  std::int64_t pages = 0;
  REQUIRE(db->Query("PRAGMA page_count", {}, [&](const std::vector<LedgerValue>& row) { pages = std::get<std::int64_t>(row[0]); }, &error));
  REQUIRE(db->Exec("PRAGMA max_page_count = " + std::to_string(pages), &error));
  RunRecord big = Sample("bbbb", 100);
  for (int i = 1; i < 5000; ++i) {
    RecordedWorker w = big.worker_rows[0];
    w.gpu = i;
    big.worker_rows.push_back(w);
  }
  CHECK_FALSE(StoreRun(*db, big, &error));
  CHECK(error.problem == LedgerProblem::kFull);
  CHECK(error.hint.find("free space") != std::string::npos);
  CHECK(CountRuns(path) == 1);
}

TEST_CASE("A writer that cannot get the lock within the busy timeout says so") {
  TempDir dir;
  const std::string path = (dir.path / "runs.db").string();
  LedgerError error;
  auto holder = LedgerDb::Open(path, true, &error);
  REQUIRE(holder);
  LedgerTransaction held(*holder, &error);
  REQUIRE(held.ok());
  auto waiter = LedgerDb::Open(path, true, &error, /*busy_timeout_ms=*/50);
  REQUIRE(waiter);
  CHECK_FALSE(StoreRun(*waiter, Sample("aaaa", 100), &error));
  CHECK(error.problem == LedgerProblem::kBusy);
  CHECK(error.hint.find("--record DIR") != std::string::npos);
  // A reader is not held up by the writer (WAL).
  auto reader = LedgerDb::Open(path, false, &error);
  REQUIRE(reader);
  CHECK(LoadRuns(*reader, {}, &error));
}

TEST_CASE("A damaged ledger is said to be corrupt, not read as empty") {
  TempDir dir;
  const std::string path = (dir.path / "runs.db").string();
  {
    LedgerError error;
    auto db = LedgerDb::Open(path, true, &error);
    REQUIRE(db);
    for (int i = 0; i < 200; ++i) REQUIRE(StoreRun(*db, Sample("run" + std::to_string(i), 100 + i), &error));
    REQUIRE(db->Exec("PRAGMA wal_checkpoint(TRUNCATE)", &error));
  }
  // Every page's header past the first page overwritten with garbage.
  {
    const auto size = fs::file_size(path);
    REQUIRE(size > 4096 * 4);
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    const std::string junk(64, '\x5a');
    for (std::uintmax_t page = 4096; page < size; page += 4096) {
      f.seekp(static_cast<std::streamoff>(page));
      f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    }
  }
  LedgerError error;
  auto db = LedgerDb::Open(path, false, &error);
  bool failed = !db;
  if (db) failed = !LoadRuns(*db, {}, &error) || !LoadWorkers(*db, {}, &error);
  CHECK(failed);
  CHECK(error.problem == LedgerProblem::kCorrupt);
}

}  // namespace unit_ledger_db_test
