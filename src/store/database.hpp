#pragma once
// The SQLite file: the queue, the lock and the history. Opening it creates it
// (0600 in a 0700 directory), sets WAL, the busy timeout and foreign keys,
// and migrates an older schema forward; a file that is not taskd's, or is
// newer than this taskd, is refused.
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <unordered_map>

#include "core/error.hpp"

// SQLiteCpp stays behind the store: only store/*.cpp include store/sqlite.hpp.
namespace SQLite {
class Database;
class Statement;
}  // namespace SQLite

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

class CachedStatement;  // store/sqlite.hpp

class Database {
 public:
  static core::Result<Database> open(const std::filesystem::path& path, const OpenOptions& options = {});
  ~Database();
  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;

  SQLite::Database& sql() { return *db_; }
  const std::filesystem::path& path() const { return path_; }

  // The statement for `sql`, prepared on first use and kept for the life of
  // the connection, with no parameter bound. For the statements of every
  // run's claim, start and finish: preparing them anew each time took about
  // a third of taskd's time in the dispatch benchmark. Not reentrant: one
  // handle per `sql` at a time.
  CachedStatement cached(const std::string& sql);

 private:
  Database(std::filesystem::path path, std::unique_ptr<SQLite::Database> db);
  std::filesystem::path path_;
  std::unique_ptr<SQLite::Database> db_;
  // Declared after db_: the statements are finalized before the connection closes.
  std::unordered_map<std::string, std::unique_ptr<SQLite::Statement>> statements_;
};

// Refuses a database that someone else could use to make taskd run commands:
// the file or its directory writable by group or others, or owned by another
// user (as sshd refuses loose key files).
core::Result<void> check_safe_to_run(const std::filesystem::path& path);

// One short write transaction (BEGIN IMMEDIATE): the unit of every state
// change. Rolled back unless committed.
class WriteTransaction {
 public:
  explicit WriteTransaction(Database& db);
  ~WriteTransaction();
  WriteTransaction(const WriteTransaction&) = delete;
  WriteTransaction& operator=(const WriteTransaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool committed_ = false;
};

// The error the exception being handled becomes: a SQLite failure "locked"
// or "busy", or an unreadable file, is `unavailable` (exit 69); a value that
// could not be read, or any other failure, `internal`. Call it in a catch.
core::Error current_error(const Database& db);

// Runs `body` and turns an exception into an error value, so none leaves
// the store.
template <class F>
auto guarded(Database& db, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (...) {
    return std::unexpected(current_error(db));
  }
}

// Runs `body` in one write transaction: committed when it returns a value,
// rolled back when it returns an error or throws.
template <class F>
auto write(Database& db, F&& body) -> decltype(body()) {
  return guarded(db, [&]() -> decltype(body()) {
    WriteTransaction tx(db);
    auto result = body();
    if (result) tx.commit();
    return result;
  });
}

}  // namespace taskd::store
