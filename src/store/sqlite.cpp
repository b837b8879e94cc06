#include "store/sqlite.hpp"

#include "store/calendars.hpp"

#include <SQLiteCpp/Backup.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "taskd_schema_sql.hpp"
#include "store/calendars.hpp"
#include "store/file_trust.hpp"
#include "store/migrations.hpp"

namespace taskd::store {
namespace {

namespace fs = std::filesystem;

// 'task' in ASCII: marks the file as taskd's (PRAGMA application_id).
constexpr int application_id = 0x7461736b;

// SQLite's "unable to open database file" with the system's reason, found
// by opening the file as SQLite would ("Permission denied").
std::string with_open_error(const std::string& what, const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return fmt::format("{}: {}", what, std::strerror(errno));
  ::close(fd);
  return what;
}

Failure failure_of(int extended_code, const std::string& what, const fs::path& path) {
  if (extended_code == SQLITE_CONSTRAINT_UNIQUE)
    return {FailureKind::duplicate, fmt::format("database {}: {}", path.string(), what)};
  int code = extended_code & 0xff;
  if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
    return {FailureKind::unavailable,
            fmt::format("database {} is locked by another process (waited past the busy timeout): {}", path.string(), what)};
  if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT || code == SQLITE_CANTOPEN || code == SQLITE_PERM ||
      code == SQLITE_READONLY || code == SQLITE_IOERR || code == SQLITE_FULL)
    return {FailureKind::unavailable, fmt::format("database {} is unavailable: {}", path.string(), what)};
  return {FailureKind::internal, fmt::format("database {}: {}", path.string(), what)};
}

// A statement stepped on SQLite's C API: SQLiteCpp's Column objects cost
// more than the read itself, in a listing of a million rows.
class SqliteQuery final : public Query {
 public:
  SqliteQuery(sqlite3* db, const std::string& sql, const fs::path& path) : db_(db), path_(path) {
    check(sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &statement_, nullptr));
  }
  ~SqliteQuery() override { sqlite3_finalize(statement_); }
  SqliteQuery(const SqliteQuery&) = delete;
  SqliteQuery& operator=(const SqliteQuery&) = delete;

  void bind_null(int i) override { check(sqlite3_bind_null(statement_, i)); }
  void bind_int64(int i, std::int64_t value) override { check(sqlite3_bind_int64(statement_, i, value)); }
  void bind_real(int i, double value) override { check(sqlite3_bind_double(statement_, i, value)); }
  // An empty view may have no data pointer, which SQLite would bind as NULL.
  void bind_text(int i, std::string_view value) override {
    check(sqlite3_bind_text(statement_, i, value.empty() ? "" : value.data(), static_cast<int>(value.size()),
                            SQLITE_TRANSIENT));
  }
  void bind_blob(int i, std::string_view value) override {
    check(sqlite3_bind_blob(statement_, i, value.empty() ? "" : value.data(), static_cast<int>(value.size()),
                            SQLITE_TRANSIENT));
  }
  bool step() override {
    int result = sqlite3_step(statement_);
    if (result == SQLITE_ROW) return true;
    if (result != SQLITE_DONE) check(result);
    changes_ = sqlite3_changes64(db_);
    return false;
  }
  std::int64_t changes() const override { return changes_; }
  void reset() noexcept override {
    sqlite3_reset(statement_);
    sqlite3_clear_bindings(statement_);
  }

  std::int64_t int64(int i) const override { return sqlite3_column_int64(statement_, i); }
  double real(int i) const override { return sqlite3_column_double(statement_, i); }
  ValueType type(int i) const override {
    switch (sqlite3_column_type(statement_, i)) {
      case SQLITE_NULL: return ValueType::null;
      case SQLITE_INTEGER: return ValueType::integer;
      case SQLITE_FLOAT: return ValueType::real;
      case SQLITE_BLOB: return ValueType::blob;
      default: return ValueType::text;
    }
  }
  int column_count() const override { return sqlite3_column_count(statement_); }
  std::string_view column_name(int i) const override { return sqlite3_column_name(statement_, i); }
  std::string_view text(int i) const override {
    const auto* text = static_cast<const char*>(sqlite3_column_blob(statement_, i));
    return text ? std::string_view(text, static_cast<std::size_t>(sqlite3_column_bytes(statement_, i)))
                : std::string_view();
  }

 private:
  void check(int result) const {
    if (result != SQLITE_OK) throw failure_of(sqlite3_extended_errcode(db_), sqlite3_errmsg(db_), path_);
  }

  sqlite3* db_;
  const fs::path& path_;
  sqlite3_stmt* statement_ = nullptr;
  std::int64_t changes_ = 0;
};

// Runs `body`, SQLiteCpp's exceptions turned into failures naming `path`.
template <class F>
void translated(const fs::path& path, F&& body) {
  try {
    body();
  } catch (const SQLite::Exception& e) {
    throw failure_of(e.getExtendedErrorCode(), e.what(), path);
  }
}

// taskd_sha256(TEXT): calendar_days_digest, for the migration that names
// tasks' calendar days by it.
void sha256_function(sqlite3_context* context, int, sqlite3_value** values) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(values[0]));
  auto digest = calendar_days_digest(text ? std::string_view(text, sqlite3_value_bytes(values[0])) : "");
  sqlite3_result_text(context, digest.c_str(), static_cast<int>(digest.size()), SQLITE_TRANSIENT);
}

void add_functions(SQLite::Database& db) {
  sqlite3_create_function_v2(db.getHandle(), "taskd_sha256", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr,
                             sha256_function, nullptr, nullptr, nullptr);
}

int user_version(SQLite::Database& db) { return db.execAndGet("PRAGMA user_version").getInt(); }

// Applies the steps above the file's version, in the caller's write transaction.
void apply_migrations(SQLite::Database& db) {
  int version = user_version(db);
  for (const auto& step : migrations(taskd_schema_sql)) {
    if (step.version <= version) continue;
    db.exec(std::string(step.sql));
    db.exec(fmt::format("PRAGMA user_version = {}", step.version));
  }
  db.exec(fmt::format("PRAGMA application_id = {}", application_id));
}

// `version`: the file's schema version as last read.
void migrate(SQLite::Database& db, int version) {
  if (version == schema_version()) return;
  SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
  apply_migrations(db);  // from the version read now: another process may have won the race
  tx.commit();
}

fs::path backup_path_of(const fs::path& path, int version) {
  fs::path backup = path;
  backup += fmt::format(".bak-{}", version);
  return backup;
}

// Copies the database at `source` to `backup` with SQLite's backup API,
// into a file created for it (0600, never over another file or through a
// link). It lies in the database's own directory: whoever could swap it
// there could swap the database too.
void back_up(const fs::path& source, const fs::path& backup) {
  int fd = ::open(backup.c_str(), O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST) throw backup_exists(backup);
  if (fd < 0)
    throw Failure(FailureKind::unavailable,
                  fmt::format("cannot create the backup {}: {}", backup.string(), std::strerror(errno)));
  ::close(fd);
  try {
    SQLite::Database from(source.string(), SQLite::OPEN_READONLY);
    SQLite::Database copy(backup.string(), SQLite::OPEN_READWRITE);
    if (SQLite::Backup(copy, from).executeStep() != SQLITE_DONE)
      throw Failure(FailureKind::unavailable,
                    fmt::format("cannot back {} up to {}: the database was busy", source.string(), backup.string()));
  } catch (...) {
    ::unlink(backup.c_str());
    throw;
  }
}

// Backs the file up, then migrates it, under one write lock: the backup
// holds the version its name says, and no write comes between. The copy is
// read by a connection of its own (SQLite backs up no connection in the
// middle of a write), from the file this one opened; `path` is the one the
// user named, beside which the backup goes.
void migrate_with_backup(SQLite::Database& db, const fs::path& path) {
  SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
  int version = user_version(db);
  if (version == schema_version()) return;
  fs::path opened = sqlite3_db_filename(db.getHandle(), "main");
  if (version > 0) back_up(opened, backup_path_of(path, version));
  apply_migrations(db);
  tx.commit();
}

class SqliteConnection final : public Connection {
 public:
  SqliteConnection(fs::path path, std::unique_ptr<SQLite::Database> db, std::chrono::milliseconds busy_timeout)
      : path_(std::move(path)), db_(std::move(db)), busy_timeout_(busy_timeout) {}

  Dialect dialect() const override { return Dialect::sqlite; }
  std::unique_ptr<Query> prepare(const std::string& sql, bool) override {
    return std::make_unique<SqliteQuery>(db_->getHandle(), sql, path_);
  }
  // BEGIN and COMMIT are prepared once: a run takes two or three transactions.
  void begin_write(WriteScope) override { run(begin_, "BEGIN IMMEDIATE"); }
  void commit() override { run(commit_, "COMMIT"); }
  void rollback() noexcept override {
    try {
      run(rollback_, "ROLLBACK");
    } catch (const Failure&) {
      // Nothing to roll back: SQLite already did, after the error that got us here.
    }
  }
  std::int64_t data_version() override {
    if (!data_version_) data_version_ = prepare("PRAGMA data_version", true);
    data_version_->step();
    std::int64_t version = data_version_->int64(0);
    data_version_->reset();
    return version;
  }
  int notice_socket() override { return -1; }
  bool take_notices() override { return false; }
  void announce_stop() override {}
  std::int64_t stop_announcements() const override { return 0; }
  std::string transport_warning() override { return {}; }
  void limit_waits(WaitLimit) override {}
  void bound_session(const SessionBounds&) override {}
  bool write_unless_locked(const std::string& sql, const std::function<void(Query&)>& bind) override {
    sqlite3_busy_timeout(raw(), 0);
    try {
      SqliteQuery query(raw(), sql, path_);
      bind(query);
      query.step();
    } catch (const Failure&) {
      bool locked = (sqlite3_errcode(raw()) & 0xff) == SQLITE_BUSY;
      sqlite3_busy_timeout(raw(), static_cast<int>(busy_timeout_.count()));
      if (locked) return false;
      throw;
    }
    sqlite3_busy_timeout(raw(), static_cast<int>(busy_timeout_.count()));
    return true;
  }
  int stored_schema_version() override {
    int version = 0;
    translated(path_, [&] { version = user_version(*db_); });
    return version;
  }
  std::string_view schema_sql() const override { return taskd_schema_sql; }
  std::optional<fs::path> backup_path(int version) const override { return backup_path_of(path_, version); }
  void migrate_schema() override { translated(path_, [&] { migrate_with_backup(*db_, path_); }); }
  SQLite::Database& handle() { return *db_; }
  sqlite3* raw() const { return db_->getHandle(); }

 private:
  void run(std::unique_ptr<Query>& statement, const char* sql) {
    if (!statement) statement = prepare(sql, true);
    statement->step();
    statement->reset();
  }

  fs::path path_;
  std::unique_ptr<SQLite::Database> db_;
  std::chrono::milliseconds busy_timeout_;
  std::unique_ptr<Query> begin_, commit_, rollback_, data_version_;
};

bool is_empty(SQLite::Database& db) { return db.execAndGet("SELECT count(*) FROM sqlite_schema").getInt() == 0; }

// Returns the file's schema version.
int check_identity(SQLite::Database& db, const fs::path& path) {
  // One snapshot: another process may be creating the schema right now, and
  // a mix of before and after its commit would look like a foreign file.
  SQLite::Transaction snapshot(db, SQLite::TransactionBehavior::DEFERRED);
  int id = db.execAndGet("PRAGMA application_id").getInt();
  int version = db.execAndGet("PRAGMA user_version").getInt();
  bool foreign = id != application_id && !(id == 0 && version == 0 && is_empty(db));
  snapshot.commit();
  if (foreign)
    throw Failure(FailureKind::unavailable,
                  fmt::format("{} is not a taskd database (it holds other tables); use --db to name another file",
                              path.string()));
  if (version > schema_version()) throw schema_refused(path.string(), version, schema_version());
  return version;
}

// Gives a file with no schema yet this taskd's; one of an older schema
// (`version`) is migrated, refused or left as `older_schema` says.
void bring_schema(SQLite::Database& db, const fs::path& path, int version, OlderSchema older_schema) {
  if (older_schema == OlderSchema::refuse && version > 0 && version < schema_version())
    throw schema_refused(path.string(), version, schema_version());
  if (older_schema != OlderSchema::leave) migrate(db, version);
}

// A new database is built under a temporary name, in WAL mode with its
// schema, and linked into place whole: processes racing to create it never
// see a file without its schema (switching a shared file to WAL takes a lock
// that SQLite does not wait for).
void create_database(const fs::path& path) {
  if (path_exists(path)) return;
  make_private_directory(path.parent_path());
  fs::path staging = path;
  staging += fmt::format(".new-{}", ::getpid());
  ::unlink(staging.c_str());  // left by a crashed process that had our pid
  int fd = ::open(staging.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0)
    throw Failure(FailureKind::unavailable, fmt::format("cannot create database {}: {}", path.string(), std::strerror(errno)));
  ::close(fd);
  try {
    SQLite::Database db(staging.string(), SQLite::OPEN_READWRITE);
    db.exec("PRAGMA journal_mode = WAL");
    add_functions(db);
    migrate(db, 0);
  } catch (const SQLite::Exception& e) {
    ::unlink(staging.c_str());
    throw failure_of(e.getExtendedErrorCode(), e.what(), path);
  }
  int linked = ::link(staging.c_str(), path.c_str());
  int link_error = errno;
  ::unlink(staging.c_str());
  if (linked != 0 && link_error != EEXIST)  // EEXIST: another process created it first
    throw Failure(FailureKind::unavailable,
                  fmt::format("cannot create database {}: {}", path.string(), std::strerror(link_error)));
}

}  // namespace

int schema_version() { return migrations(taskd_schema_sql).back().version; }

std::unique_ptr<Connection> open_sqlite(const fs::path& path, const OpenOptions& options) {
  bool stand_in = options.if_missing == IfMissing::use_empty && !path_exists(path);
  if (!stand_in) create_database(path);
  try {
    // A connection is only ever used by the thread that opened it: SQLite's
    // own locking of it (a mutex taken at every column read) is pure cost.
    auto db = std::make_unique<SQLite::Database>(stand_in ? ":memory:" : path.string(),
                                                 SQLite::OPEN_READWRITE | SQLite::OPEN_NOMUTEX,
                                                 static_cast<int>(options.busy_timeout.count()));
    int version = check_identity(*db, path);
    add_functions(*db);
    db->exec("PRAGMA journal_mode = WAL");
    db->exec("PRAGMA synchronous = NORMAL");
    db->exec("PRAGMA foreign_keys = ON");
    bring_schema(*db, path, version, options.older_schema);
    return std::make_unique<SqliteConnection>(path, std::move(db), options.busy_timeout);
  } catch (const SQLite::Exception& e) {
    bool cannot_open = (e.getErrorCode() & 0xff) == SQLITE_CANTOPEN;
    throw failure_of(e.getExtendedErrorCode(), cannot_open ? with_open_error(e.what(), path) : e.what(), path);
  }
}

SQLite::Database& sqlite_handle(Database& db) { return dynamic_cast<SqliteConnection&>(db.connection()).handle(); }

core::Result<void> check_opened_file_safe(const Database& db) {
  using core::ErrorKind;
  using core::fail;
  sqlite3* handle = dynamic_cast<const SqliteConnection&>(db.connection()).raw();
  // The path SQLite opened, its symbolic links resolved as it opened it; its
  // WAL and shared-memory files are found beside it.
  fs::path opened = sqlite3_db_filename(handle, "main");
  auto used = TRY(check_private_file(opened));
  auto named = TRY(check_private_file(*db.file()));
  // Both paths are out of other users' reach now: the file SQLite holds must
  // be the one they lead to (the unix VFS compares its inode with the path's).
  int moved = 0;
  if (sqlite3_file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved) != SQLITE_OK || moved ||
      used.st_dev != named.st_dev || used.st_ino != named.st_ino)
    return fail(ErrorKind::unavailable,
                fmt::format("{} does not lead to the file taskd opened ({}): it was moved or replaced meanwhile",
                            db.file()->string(), opened.string()));
  return {};
}

}  // namespace taskd::store
