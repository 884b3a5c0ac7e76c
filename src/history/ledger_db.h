// The run history's database: one SQLite file (docs/history.md), opened,
// created on first use and migrated to this jobviz's schema, with the
// settings many writers need (WAL, a busy timeout). What can go wrong with
// it is a LedgerError of a kind the commands turn into exit 5 and a hint;
// a write is one transaction, so an interrupted one leaves the file as it was.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace jobviz {

// The schema this jobviz writes and reads (PRAGMA user_version); a ledger of
// an older one is migrated when opened for writing.
inline constexpr int kLedgerSchema = 2;
// PRAGMA application_id of a jobviz ledger: "JBVZ".
inline constexpr std::int32_t kLedgerApplicationId = 0x4A42565A;

// The SQL that takes a ledger from schema `from` to `from` + 1 (tests build
// an older ledger with it).
std::string_view LedgerMigration(int from);

enum class LedgerProblem {
  kCannotOpen,   // no such directory, no permission
  kNotALedger,   // another SQLite database, or not SQLite at all
  kNewerSchema,  // written by a newer jobviz
  kBusy,         // locked by another writer past the busy timeout
  kFull,         // the disk (or quota) is full
  kCorrupt,      // a damaged page
  kOther,
};

struct LedgerError {
  LedgerProblem problem = LedgerProblem::kOther;
  std::string message;  // "<path>: <what>", for the user
  std::string hint;
};

// A value bound to, or read from, a statement.
using LedgerValue = std::variant<std::monostate, std::int64_t, double, std::string>;

class LedgerDb {
 public:
  // Opens `path`. `for_writing`: created when missing, migrated when older;
  // otherwise it must exist (a reader never creates one).
  static std::optional<LedgerDb> Open(const std::string& path, bool for_writing, LedgerError* error,
                                      int busy_timeout_ms = 10'000);
  LedgerDb(LedgerDb&& other) noexcept;
  LedgerDb& operator=(LedgerDb&&) = delete;
  LedgerDb(const LedgerDb&) = delete;
  ~LedgerDb();

  // Runs `sql` (no results); false with `error` set on failure.
  bool Exec(std::string_view sql, LedgerError* error);
  // Runs one statement with `args` bound to ?1, ?2...; each result row's
  // columns are handed to `row` (may be null).
  using RowFn = std::function<void(const std::vector<LedgerValue>&)>;
  bool Query(std::string_view sql, const std::vector<LedgerValue>& args, const RowFn& row, LedgerError* error);
  // The same statement run many times (a run's workers): prepared once.
  class Statement {
   public:
    Statement(LedgerDb& db, std::string_view sql, LedgerError* error);
    Statement(const Statement&) = delete;
    ~Statement();
    bool ok() const { return statement_ != nullptr; }
    bool Run(const std::vector<LedgerValue>& args, const RowFn& row, LedgerError* error);

   private:
    LedgerDb& db_;
    sqlite3_stmt* statement_ = nullptr;
    bool reads_ = false;
  };
  std::int64_t LastInsertId() const;
  bool empty() const { return empty_; }  // opened for reading, and no run was ever recorded
  const std::string& path() const { return path_; }

 private:
  LedgerDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  LedgerError ErrorOf(int code, std::string_view what) const;
  bool CheckAndMigrate(bool for_writing, LedgerError* error);
  sqlite3* db_ = nullptr;
  std::string path_;
  bool empty_ = false;
  bool reading_ = false;  // opened for reading: one read transaction until closed
};

// A transaction that rolls back unless committed (an error part-way leaves
// the ledger as it was).
class LedgerTransaction {
 public:
  LedgerTransaction(LedgerDb& db, LedgerError* error);  // BEGIN IMMEDIATE: the write lock now, or busy
  ~LedgerTransaction();
  bool ok() const { return ok_; }
  bool Commit(LedgerError* error);

 private:
  LedgerDb& db_;
  bool ok_ = false, done_ = false;
};

}  // namespace jobviz
