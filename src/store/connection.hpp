#pragma once
// The seam between taskd's queries and a database engine: a connection that
// prepares queries and runs write transactions, implemented for SQLite
// (store/sqlite.cpp) and PostgreSQL (store/postgresql.cpp). Only store/
// includes it; the rest of taskd sees store::Database.
//
// Queries are written once, in the SQL both engines speak, with SQLite's
// parameters (? and ?N); the PostgreSQL connection numbers them $N. Where
// the engines differ the query asks Database::dialect().
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "store/database.hpp"

namespace taskd::store {

enum class Dialect { sqlite, postgresql };

// What a failure of the engine means to taskd.
enum class FailureKind {
  unavailable,  // the database cannot be reached, is locked past the timeout, or is not taskd's (exit 69)
  busy,         // a server: another session held a lock this one needed past the lock timeout
  duplicate,    // a unique constraint refused the write
  internal,     // anything else: a bug, or a value taskd cannot read
};

// Thrown by a connection or a query; store::guarded turns it into an error value.
class Failure : public std::runtime_error {
 public:
  Failure(FailureKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  FailureKind kind() const { return kind_; }

 private:
  FailureKind kind_;
};

// What a column of the current row holds.
enum class ValueType { null, integer, real, text, blob };

// A prepared query: parameters are numbered from 1, columns from 0.
class Query {
 public:
  virtual ~Query() = default;
  virtual void bind_null(int i) = 0;
  virtual void bind_int64(int i, std::int64_t value) = 0;
  virtual void bind_real(int i, double value) = 0;
  virtual void bind_text(int i, std::string_view value) = 0;
  virtual void bind_blob(int i, std::string_view value) = 0;
  // Runs the query at the first call; true while a row is there to read.
  virtual bool step() = 0;
  // The rows the statement changed, once step() has returned false.
  virtual std::int64_t changes() const = 0;
  // Ends the query (rows not read are dropped) and clears the parameters.
  virtual void reset() noexcept = 0;

  virtual std::int64_t int64(int i) const = 0;  // a boolean reads as 0 or 1
  virtual double real(int i) const = 0;
  virtual ValueType type(int i) const = 0;
  bool is_null(int i) const { return type(i) == ValueType::null; }
  bool is_integer(int i) const { return type(i) == ValueType::integer; }
  // The row's columns and their names, while a row is there to read.
  virtual int column_count() const = 0;
  virtual std::string_view column_name(int i) const = 0;
  // Valid until the next step.
  virtual std::string_view text(int i) const = 0;
};

// Makes `dir` and its missing parents, 0700 (a Failure if it cannot).
void make_private_directory(const std::filesystem::path& dir);

// Whether anything is at `path`; a Failure (unavailable) when that cannot be
// told (a directory on the way that cannot be searched, a loop of links).
bool path_exists(const std::filesystem::path& path);

class Connection {
 public:
  virtual ~Connection() = default;
  virtual Dialect dialect() const = 0;
  // `cached`: the query will be run again and again (the engine may keep
  // its plan under a name).
  virtual std::unique_ptr<Query> prepare(const std::string& sql, bool cached) = 0;
  // A write transaction that keeps out the others as `scope` says (see
  // WriteScope): SQLite's BEGIN IMMEDIATE for either; on PostgreSQL a
  // transaction-level advisory lock, exclusive or shared.
  virtual void begin_write(WriteScope scope) = 0;
  virtual void commit() = 0;
  virtual void rollback() noexcept = 0;

  // A number that changes when another connection commits (SQLite's PRAGMA
  // data_version; the count of a server's change notices).
  virtual std::int64_t data_version() = 0;
  // The descriptor that becomes readable when another connection commits,
  // which may change when the connection is made again; -1 when the engine
  // has none (a SQLite file's writes show as file events instead).
  virtual int notice_socket() = 0;
  // Reads the notices that came; true if one was another connection's commit.
  virtual bool take_notices() = 0;
  // Inside a write: tells every listener, at the commit, that a run was
  // asked to stop (overlap=replace on a server), so that its worker looks
  // soon; this connection counts it too. Nothing on a SQLite file, where
  // the asking process stops the run itself.
  virtual void announce_stop() = 0;
  // How many such announcements this connection has heard or made.
  virtual std::int64_t stop_announcements() const = 0;
  // What is unsafe in how the database is reached, for `status` to warn
  // of (a server over TCP whose certificate is not verified); empty: nothing.
  virtual std::string transport_warning() = 0;
  // Bounds every later wait on a server by `limit` as well: one that
  // reaches it gives the connection up (an unavailable failure), so that a
  // caller with a deadline of its own is back in time for it. A SQLite
  // file, on this machine, has no such wait: ignored.
  virtual void limit_waits(WaitLimit limit) = 0;
  // Bounds this session, and every later one, on a server as `bounds`
  // says; a connection that cannot take them is given up, and the next one
  // is made with them. Nothing on a SQLite file.
  virtual void bound_session(const SessionBounds& bounds) = 0;

  // Runs `sql`, one write whose parameters `bind` binds, at once, or not at
  // all when another process holds a SQLite file's write lock (on a server
  // it waits as any statement does): whether it ran. For a record that is
  // worth nothing late.
  virtual bool write_unless_locked(const std::string& sql, const std::function<void(Query&)>& bind) = 0;

  // The schema's version in the database (0: none yet), and this taskd's
  // schema: its "-- migrate: N" sections.
  virtual int stored_schema_version() = 0;
  virtual std::string_view schema_sql() const = 0;
  // Where a SQLite file at `version` is backed up before it is migrated;
  // none on a server.
  virtual std::optional<std::filesystem::path> backup_path(int version) const = 0;
  // Brings the schema to this taskd's (see store::migrate_schema).
  virtual void migrate_schema() = 0;
};

// The failure of opening a database of a schema newer than this taskd's,
// or of an older one to only read it (`name`: the file, or the server
// without its secrets).
Failure schema_refused(const std::string& name, int version, int current);
// The failure of a migration whose backup would write over a file.
Failure backup_exists(const std::filesystem::path& backup);

}  // namespace taskd::store
