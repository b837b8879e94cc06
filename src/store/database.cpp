#include "store/database.hpp"

#include "store/sqlite.hpp"

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

#include "schema_sql.hpp"

namespace taskd::store {
namespace {

namespace fs = std::filesystem;
using core::ErrorKind;
using core::fail;

// 'task' in ASCII: marks the file as taskd's (PRAGMA application_id).
constexpr int application_id = 0x7461736b;
constexpr std::string_view migrate_marker = "-- migrate: ";

struct Migration {
  int version;
  std::string_view sql;
};

std::vector<Migration> migrations() {
  std::vector<Migration> out;
  std::string_view rest = taskd_schema_sql;
  std::size_t at = rest.find(migrate_marker);
  while (at != std::string_view::npos) {
    std::size_t number_start = at + migrate_marker.size();
    int version = 0;
    std::from_chars(rest.data() + number_start, rest.data() + rest.size(), version);
    std::size_t body_start = std::min(rest.find('\n', number_start), rest.size());
    std::size_t next = rest.find(migrate_marker, number_start);
    out.push_back({version, rest.substr(body_start, next == std::string_view::npos ? next : next - body_start)});
    at = next;
  }
  return out;
}

std::string mode_string(mode_t mode) { return fmt::format("{:04o}", mode & 07777); }

core::Result<void> make_private_directory(const fs::path& dir) {
  if (dir.empty() || fs::exists(dir)) return {};
  if (auto parent = make_private_directory(dir.parent_path()); !parent) return parent;
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return fail(ErrorKind::unavailable, fmt::format("cannot create directory {}: {}", dir.string(), std::strerror(errno)));
  return {};
}


bool is_empty(SQLite::Database& db) { return db.execAndGet("SELECT count(*) FROM sqlite_schema").getInt() == 0; }

// Returns the file's schema version.
core::Result<int> check_identity(SQLite::Database& db, const fs::path& path) {
  // One snapshot: another process may be creating the schema right now, and
  // a mix of before and after its commit would look like a foreign file.
  SQLite::Transaction snapshot(db, SQLite::TransactionBehavior::DEFERRED);
  int id = db.execAndGet("PRAGMA application_id").getInt();
  int version = db.execAndGet("PRAGMA user_version").getInt();
  bool foreign = id != application_id && !(id == 0 && version == 0 && is_empty(db));
  snapshot.commit();
  if (foreign)
    return fail(ErrorKind::unavailable,
                fmt::format("{} is not a taskd database (it holds other tables); use --db to name another file",
                            path.string()));
  if (version > schema_version())
    return fail(ErrorKind::unavailable,
                fmt::format("{} has schema version {}, newer than this taskd knows ({}); upgrade taskd",
                            path.string(), version, schema_version()));
  return version;
}


// `version`: the file's schema version as last read.
void migrate(SQLite::Database& db, int version) {
  if (version == schema_version()) return;
  SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
  version = db.execAndGet("PRAGMA user_version").getInt();  // another process may have won the race
  for (const auto& step : migrations()) {
    if (step.version <= version) continue;
    db.exec(std::string(step.sql));
    db.exec(fmt::format("PRAGMA user_version = {}", step.version));
  }
  db.exec(fmt::format("PRAGMA application_id = {}", application_id));
  tx.commit();
}

// A new database is built under a temporary name, in WAL mode with its
// schema, and linked into place whole: processes racing to create it never
// see a file without its schema (switching a shared file to WAL takes a lock
// that SQLite does not wait for).
core::Result<void> create_database(const fs::path& path) {
  if (fs::exists(path)) return {};
  if (auto dir = make_private_directory(path.parent_path()); !dir) return dir;
  fs::path staging = path;
  staging += fmt::format(".new-{}", ::getpid());
  ::unlink(staging.c_str());  // left by a crashed process that had our pid
  int fd = ::open(staging.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0)
    return fail(ErrorKind::unavailable, fmt::format("cannot create database {}: {}", path.string(), std::strerror(errno)));
  ::close(fd);
  try {
    SQLite::Database db(staging.string(), SQLite::OPEN_READWRITE);
    db.exec("PRAGMA journal_mode = WAL");
    migrate(db, 0);
  } catch (const SQLite::Exception& e) {
    ::unlink(staging.c_str());
    return std::unexpected(error_from(e, path));
  }
  int linked = ::link(staging.c_str(), path.c_str());
  int link_error = errno;
  ::unlink(staging.c_str());
  if (linked != 0 && link_error != EEXIST)  // EEXIST: another process created it first
    return fail(ErrorKind::unavailable, fmt::format("cannot create database {}: {}", path.string(), std::strerror(link_error)));
  return {};
}

}  // namespace

int schema_version() { return migrations().back().version; }

core::Error error_from(const SQLite::Exception& e, const fs::path& path) {
  int code = e.getErrorCode() & 0xff;
  if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
    return {ErrorKind::unavailable, fmt::format("database {} is locked by another process (waited past the busy timeout): {}",
                                                path.string(), e.what())};
  if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT || code == SQLITE_CANTOPEN || code == SQLITE_PERM ||
      code == SQLITE_READONLY || code == SQLITE_IOERR || code == SQLITE_FULL)
    return {ErrorKind::unavailable, fmt::format("database {} is unavailable: {}", path.string(), e.what())};
  return {ErrorKind::internal, fmt::format("database {}: {}", path.string(), e.what())};
}

core::Error current_error(const Database& db) {
  try {
    throw;
  } catch (const SQLite::Exception& e) {
    return error_from(e, db.path());
  } catch (const std::exception& e) {
    return {ErrorKind::internal, "database " + db.path().string() + " holds a malformed value: " + e.what()};
  } catch (...) {
    return {ErrorKind::internal, "database " + db.path().string() + ": an unknown failure"};
  }
}

Database::Database(fs::path path, std::unique_ptr<SQLite::Database> db) : path_(std::move(path)), db_(std::move(db)) {}
Database::~Database() = default;
Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;

core::Result<Database> Database::open(const fs::path& path, const OpenOptions& options) {
  bool stand_in = options.if_missing == IfMissing::use_empty && !fs::exists(path);
  if (!stand_in) {
    if (auto created = create_database(path); !created) return std::unexpected(created.error());
  }
  try {
    // A connection is only ever used by the thread that opened it: SQLite's
    // own locking of it (a mutex taken at every column read) is pure cost.
    auto db = std::make_unique<SQLite::Database>(stand_in ? ":memory:" : path.string(),
                                                 SQLite::OPEN_READWRITE | SQLite::OPEN_NOMUTEX,
                                                 static_cast<int>(options.busy_timeout.count()));
    auto version = check_identity(*db, path);
    if (!version) return std::unexpected(version.error());
    db->exec("PRAGMA journal_mode = WAL");
    db->exec("PRAGMA synchronous = NORMAL");
    db->exec("PRAGMA foreign_keys = ON");
    migrate(*db, *version);
    return Database(path, std::move(db));
  } catch (const SQLite::Exception& e) {
    return std::unexpected(error_from(e, path));
  }
}

CachedStatement Database::cached(const std::string& sql) {
  auto& statement = statements_[sql];
  if (!statement) statement = std::make_unique<SQLite::Statement>(*db_, sql);
  statement->clearBindings();
  return CachedStatement(*statement);
}

// BEGIN and COMMIT are cached too: a run takes two or three transactions.
WriteTransaction::WriteTransaction(Database& db) : db_(db) { db_.cached("BEGIN IMMEDIATE")->exec(); }

WriteTransaction::~WriteTransaction() {
  if (committed_) return;
  try {
    db_.cached("ROLLBACK")->exec();
  } catch (const SQLite::Exception&) {
    // Nothing to roll back: SQLite already did, after the error that got us here.
  }
}

void WriteTransaction::commit() {
  db_.cached("COMMIT")->exec();
  committed_ = true;
}

core::Result<void> check_safe_to_run(const fs::path& path) {
  for (const fs::path& checked : {path, fs::absolute(path).parent_path()}) {
    struct stat info {};
    if (::stat(checked.c_str(), &info) != 0)
      return fail(ErrorKind::unavailable, fmt::format("cannot check {}: {}", checked.string(), std::strerror(errno)));
    if (info.st_mode & (S_IWGRP | S_IWOTH))
      return fail(ErrorKind::unavailable,
                  fmt::format("refusing to run tasks: {} is writable by group or others (mode {}); whoever can "
                              "write it can make taskd run any command (fix: chmod go-w {})",
                              checked.string(), mode_string(info.st_mode), checked.string()));
    if (info.st_uid != ::getuid() && info.st_uid != 0)
      return fail(ErrorKind::unavailable,
                  fmt::format("refusing to run tasks: {} is owned by uid {}, not by you (uid {}) or root",
                              checked.string(), info.st_uid, ::getuid()));
  }
  return {};
}

}  // namespace taskd::store
