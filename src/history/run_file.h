// --record DIR: the run as one small JSON file, DIR/<identity>.json, written
// atomically, for where SQLite's locks do not hold (NFS, Lustre: many hosts
// writing one file). `jobviz history DIR` and `jobviz hosts DIR` read such a
// directory as a ledger; `jobviz history --import DIR LEDGER` adds its runs
// to a ledger (docs/history.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "history/ledger_db.h"
#include "history/run_record.h"

namespace jobviz {

// The directory form of --record: an existing directory, or a path ending in '/'.
bool IsRunDirectory(const std::string& path);

nlohmann::json RunToJson(const RunRecord& record);
// nullopt with `error` set when `doc` is not a run file's.
std::optional<RunRecord> RunFromJson(const nlohmann::json& doc, std::string* error);

struct WrittenRun {
  std::string path;
  bool already = false;  // a file of that identity was there: left as it was
};
// Writes DIR/<identity>.json (making DIR); nullopt with `error` on failure.
std::optional<WrittenRun> WriteRunFile(const std::string& dir, const RunRecord& record, std::string* error);

// Every run file of `dir` stored into `db` (a run already there is kept);
// `added` counts the new ones. A file that is not a run file is an error
// naming it: nothing is added then (one transaction a file, checked first).
bool ImportRunFiles(const std::string& dir, LedgerDb& db, size_t* added, size_t* files, LedgerError* error);

}  // namespace jobviz
