#pragma once
// The database: the queue, the lock and the history. It is a SQLite file
// (a path, or nothing: the default) or a PostgreSQL server (a libpq
// connection string, postgresql://... or host=...; see location.hpp).
// Opening it creates it (a SQLite file 0600 in a 0700 directory; the
// PostgreSQL schema "taskd") and migrates an older schema forward, or
// refuses it (see OlderSchema); a database that is not taskd's, or is newer
// than this taskd, is refused.
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.hpp"
#include "core/time.hpp"
#include "store/location.hpp"

namespace taskd::store {

class Connection;
class Query;

// The instant past which no wait on a server may go (none: the reply
// timeout alone bounds it); asked before each wait.
using WaitLimit = std::function<std::optional<std::chrono::steady_clock::time_point>()>;
class Statement;
enum class Dialect;

// The schema version this taskd writes to a SQLite file (the highest
// "-- migrate: N" of schema.sql).
int schema_version();

// What opening a database that does not exist does: create it, or (for
// commands that only read or change existing tasks) stand in an empty one in
// memory, so that nothing is written.
enum class IfMissing { create, use_empty };

// What opening a database of an older schema than this taskd's does (one
// with no schema yet is given this taskd's whatever this says):
enum class OlderSchema {
  migrate,  // brings it forward: the commands that write
  refuse,   // refuses it, naming both versions and `taskd migrate`: the commands that only read
  leave,    // opens it as it is: `taskd migrate`, which looks first (schema_plan)
};

struct OpenOptions {
  IfMissing if_missing = IfMissing::create;
  OlderSchema older_schema = OlderSchema::migrate;
  // SQLite: how long a write waits for another process's. PostgreSQL: as
  // long, a statement waits for a lock another session holds (then fails
  // as busy), and a session may sit idle in a transaction (then the server
  // ends it), until bound_session says otherwise; and taskd waits at least
  // 30 s for the server to answer before it gives the connection up (a
  // hung server never hangs taskd).
  std::chrono::milliseconds busy_timeout{5000};
  // Where a server store keeps this host's files (the spawn ledger); empty:
  // $XDG_STATE_HOME/taskd, or ~/.local/state/taskd.
  std::filesystem::path state_dir;
};

class Database {
 public:
  static core::Result<Database> open(const std::string& location, const OpenOptions& options = {});
  ~Database();
  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;

  Dialect dialect() const;
  // The database as messages name it: the file, or the server without its secrets.
  const std::string& name() const { return name_; }
  // The SQLite file; none for a server.
  const std::optional<std::filesystem::path>& file() const { return file_; }
  // The stem of the files this host keeps beside the database (the spawn
  // ledger adds "-spawns.PID.START" to it): the SQLite file itself, or
  // "taskd" in the state directory for a server.
  const std::filesystem::path& local_stem() const { return local_stem_; }

  // The statement for `sql`, prepared on first use and kept for the life of
  // the connection, with no parameter bound. For the statements of every
  // run's claim, start and finish: preparing them anew each time took about
  // a third of taskd's time in the dispatch benchmark. Not reentrant: one
  // handle per `sql` at a time.
  Statement cached(const std::string& sql);
  // A statement for one use.
  Statement prepare(const std::string& sql);
  Connection& connection() { return *connection_; }
  const Connection& connection() const { return *connection_; }

 private:
  Database(std::string name, std::optional<std::filesystem::path> file, std::filesystem::path local_stem,
           std::unique_ptr<Connection> connection);
  std::string name_;
  std::optional<std::filesystem::path> file_;
  std::filesystem::path local_stem_;
  std::unique_ptr<Connection> connection_;
  // Declared after connection_: the statements are finalized before the connection closes.
  std::unordered_map<std::string, std::unique_ptr<Query>> statements_;
};

// A step of this taskd's schema: its version, and what it brings (the first
// comment line of its section of schema.sql or schema-postgresql.sql).
struct SchemaStep {
  int version;
  std::string what;
};

// What bringing a database opened with OlderSchema::leave to this taskd's
// schema takes.
struct SchemaPlan {
  int version;  // the database's (0: no schema yet)
  int current;  // this taskd's
  std::vector<SchemaStep> steps;
  // A SQLite file with a schema is first copied to <file>.bak-<version>,
  // which must not exist yet.
  std::optional<std::filesystem::path> backup;
};
core::Result<SchemaPlan> schema_plan(Database& db);
// Makes the backup the plan names (SQLite's backup API, 0600, never over
// another file), then applies the steps, under one write lock: the backup
// holds the version its name says.
core::Result<void> migrate_schema(Database& db);

// A server's change notices (LISTEN taskd; the schema's triggers NOTIFY
// every change to a task, a run or a group, as it commits): the socket to poll, which changes when the
// connection is made again, and whether another process committed since the
// last call. Not for a SQLite file, whose writes show as file events.
core::Result<int> notice_socket(Database& db);
core::Result<bool> take_notices(Database& db);
// How many runs this connection heard or told were asked to stop (see
// Connection::announce_stop).
std::int64_t stop_announcements(Database& db);

// Bounds every later wait on a server by `limit` too (see Connection).
void limit_waits(Database& db, WaitLimit limit);

// What a server lets a session of taskd's hold up others with: a statement
// waits at most `lock_wait` for a lock another session holds, then fails as
// busy (ErrorKind::busy: look again later); a session idle in a transaction
// for `idle_in_transaction` (its taskd frozen or cut off) is ended by the
// server, which rolls the transaction back and frees its locks; and one
// whose taskd has left what the server sent unacknowledged for
// `unacknowledged` (its machine paused or cut off; 0: the system's time,
// minutes) is given up by the server's TCP. Not for a command whose output
// a pager may hold back: that time also ends a session whose reader stops.
struct SessionBounds {
  std::chrono::milliseconds lock_wait;
  std::chrono::milliseconds idle_in_transaction;
  std::chrono::milliseconds unacknowledged{0};
};
// Bounds this and every later session of a server by `bounds` (see
// Connection); nothing on a SQLite file.
void bound_session(Database& db, const SessionBounds& bounds);

// The database server's clock, read in one round trip; none for a SQLite
// file, which has only this machine's.
core::Result<std::optional<core::Time>> server_time(Database& db);

// What is unsafe in how the database is reached (see Connection); empty: nothing.
core::Result<std::string> transport_warning(Database& db);

// Refuses a database that someone else could use to make taskd run commands
// (as sshd refuses loose key files): the file or its directory writable by
// group or others or owned by another user, a path to it that another user
// could redirect (see store/file_trust.hpp), or a path that no longer leads
// to the file opened. On a server, whose access is its roles', the same of
// the state directory, where this host's spawn ledgers tell it whose process
// groups to end.
core::Result<void> check_safe_to_run(const Database& db);

// Refuses a database file that someone else could write, as
// check_safe_to_run judges it; nothing on a server, whose roles decide.
core::Result<void> check_private_database_file(const Database& db);

// Which other write transactions one keeps out while it runs.
enum class WriteScope {
  // All of them: one at a time on the database. Every write but the three
  // below, which need not reason about any other writer.
  database,
  // Only those that change the same tasks or groups: it runs beside others
  // of its kind and locks the rows it reads to change (a task's row before
  // its state or runs, a capped group's row before starting a run in it),
  // each in an order that cannot deadlock. For the hot paths of a scheduler
  // shared by several hosts: the tick, the claim, the record of an attempt's
  // end. On a SQLite file, which has one writer, it is `database`.
  rows,
};

// One short write transaction (SQLite's BEGIN IMMEDIATE; on PostgreSQL an
// advisory lock, exclusive for WriteScope::database, shared for rows): the
// unit of every state change. Rolled back unless committed.
class WriteTransaction {
 public:
  WriteTransaction(Database& db, WriteScope scope);
  ~WriteTransaction();
  WriteTransaction(const WriteTransaction&) = delete;
  WriteTransaction& operator=(const WriteTransaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool committed_ = false;
};

// The error the exception being handled becomes: an unreachable server, a
// SQLite file locked past the busy timeout or unreadable, is `unavailable`
// (exit 69); a value that could not be read, or any other failure,
// `internal`. Call it in a catch.
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
auto write(Database& db, F&& body, WriteScope scope = WriteScope::database) -> decltype(body()) {
  return guarded(db, [&]() -> decltype(body()) {
    WriteTransaction tx(db, scope);
    auto result = body();
    if (result) tx.commit();
    return result;
  });
}

}  // namespace taskd::store
