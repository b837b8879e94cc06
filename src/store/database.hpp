#pragma once
// The SQLite file: the queue, the lock and the history. Opening it creates it
// (0600 in a 0700 directory), sets WAL, the busy timeout and foreign keys,
// and migrates an older schema forward; a file that is not taskd's, or is
// newer than this taskd, is refused.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Transaction.h>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "core/error.hpp"

namespace taskd::store {

// The schema version this taskd writes (the highest "-- migrate: N").
int schema_version();

// What opening a database that does not exist does: create it, or (for
// commands that only read or change existing tasks) stand in an empty one in
// memory, so that nothing is written.
enum class IfMissing { create, use_empty };

struct OpenOptions {
  IfMissing if_missing = IfMissing::create;
  std::chrono::milliseconds busy_timeout{5000};
};

class Database {
 public:
  static core::Result<Database> open(const std::filesystem::path& path, const OpenOptions& options = {});

  SQLite::Database& sql() { return *db_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  Database(std::filesystem::path path, std::unique_ptr<SQLite::Database> db)
      : path_(std::move(path)), db_(std::move(db)) {}
  std::filesystem::path path_;
  std::unique_ptr<SQLite::Database> db_;
};

// Refuses a database that someone else could use to make taskd run commands:
// the file or its directory writable by group or others, or owned by another
// user (as sshd refuses loose key files).
core::Result<void> check_safe_to_run(const std::filesystem::path& path);

// One short write transaction (BEGIN IMMEDIATE): the unit of every state change.
class WriteTransaction {
 public:
  explicit WriteTransaction(Database& db) : tx_(db.sql(), SQLite::TransactionBehavior::IMMEDIATE) {}
  void commit() { tx_.commit(); }

 private:
  SQLite::Transaction tx_;
};

// The error a SQLite failure becomes: "locked"/"busy" and unreadable files are
// `unavailable` (exit 69), the rest `internal`.
core::Error error_from(const SQLite::Exception& e, const std::filesystem::path& path);

// Runs `body` and turns a SQLite exception into an error value, so none
// leaves the store.
template <class F>
auto guarded(Database& db, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const SQLite::Exception& e) {
    return std::unexpected(error_from(e, db.path()));
  } catch (const std::exception& e) {
    return std::unexpected(core::Error{core::ErrorKind::internal,
                                       "database " + db.path().string() + " holds a malformed value: " + e.what()});
  }
}

}  // namespace taskd::store
