#include "store/database.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <sys/stat.h>

#include "store/columns.hpp"
#include "store/file_trust.hpp"
#include "store/migrations.hpp"
#include "store/postgresql.hpp"
#include "store/sqlite.hpp"

namespace taskd::store {
namespace {

namespace fs = std::filesystem;
using core::ErrorKind;

fs::path default_state_dir() {
  if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state) return fs::path(state) / "taskd";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : ".") / ".local" / "state" / "taskd";
}

// The spellings SQLite takes for no file: a database in memory, gone when
// the command ends, and URIs, whose options it obeys; and names the kernel
// refuses. Checked before anything is created.
core::Result<void> check_file_name(const std::string& location) {
  if (location.empty()) return core::fail(ErrorKind::bad_input, "the database path is empty");
  if (location == ":memory:")
    return core::fail(ErrorKind::bad_input,
                      "\":memory:\" is a database in memory, gone when the command ends: "
                      "name a file (./:memory: for a file of that name)");
  if (location.starts_with("file:"))
    return core::fail(
        ErrorKind::bad_input,
        fmt::format("\"{}\" is a SQLite URI: name a file (./{} for a file of that name)", location, location));
  if (location.size() >= PATH_MAX)
    return core::fail(ErrorKind::bad_input, fmt::format("the database path is {} bytes long, more than the {} a "
                                                        "path may have",
                                                        location.size(), PATH_MAX - 1));
  int index = 0;
  for (const auto& component : fs::path(location)) {
    ++index;
    if (component.native().size() > NAME_MAX)
      return core::fail(ErrorKind::bad_input,
                        fmt::format("the database path's component {} is {} bytes long, more than the {} a file "
                                    "name may have",
                                    index, component.native().size(), NAME_MAX));
  }
  return {};
}

// A duplicate that reaches the caller is a bug: the writes that may meet
// one handle it.
ErrorKind error_kind_of(FailureKind kind) {
  switch (kind) {
    case FailureKind::unavailable: return ErrorKind::unavailable;
    case FailureKind::busy: return ErrorKind::busy;
    case FailureKind::duplicate:
    case FailureKind::internal: break;
  }
  return ErrorKind::internal;
}

// Whether a name is taken: by a file, a dangling link too, or unknown.
bool name_taken(const fs::path& path) {
  struct stat st{};
  return ::lstat(path.c_str(), &st) == 0 || errno != ENOENT;
}

}  // namespace

bool path_exists(const fs::path& path) {
  std::error_code error;
  bool found = fs::exists(path, error);
  if (error)
    throw Failure(FailureKind::unavailable, fmt::format("cannot look at {}: {}", path.string(), error.message()));
  return found;
}

void make_private_directory(const fs::path& dir) {
  if (dir.empty() || path_exists(dir)) return;
  make_private_directory(dir.parent_path());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw Failure(FailureKind::unavailable, fmt::format("cannot create directory {}: {}", dir.string(), std::strerror(errno)));
}

Database::Database(std::string name, std::optional<fs::path> file, fs::path local_stem,
                   std::unique_ptr<Connection> connection)
    : name_(std::move(name)), file_(std::move(file)), local_stem_(std::move(local_stem)),
      connection_(std::move(connection)) {}
Database::~Database() = default;
Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;

core::Result<Database> Database::open(const std::string& location, const OpenOptions& options) {
  try {
    if (is_server_uri(location)) {
      TRY(check_server_location(location));
      auto state_dir = options.state_dir.empty() ? default_state_dir() : options.state_dir;
      make_private_directory(state_dir);
      return Database(without_password(location), std::nullopt, state_dir / "taskd",
                      open_postgresql(location, options));
    }
    TRY(check_file_name(location));
    return Database(location, fs::path(location), fs::path(location), open_sqlite(location, options));
  } catch (const Failure& failure) {
    return core::fail(error_kind_of(failure.kind()), failure.what());
  }
}

Dialect Database::dialect() const { return connection_->dialect(); }

Statement Database::cached(const std::string& sql) {
  auto& statement = statements_[sql];
  if (!statement) statement = connection_->prepare(sql, true);
  return Statement(*statement);
}

Statement Database::prepare(const std::string& sql) { return Statement(connection_->prepare(sql, false)); }

core::Error current_error(const Database& db) {
  try {
    throw;
  } catch (const Failure& failure) {
    return {error_kind_of(failure.kind()), failure.what()};
  } catch (const std::exception& e) {
    return {ErrorKind::internal, "database " + db.name() + " holds a malformed value: " + e.what()};
  } catch (...) {
    return {ErrorKind::internal, "database " + db.name() + ": an unknown failure"};
  }
}

Failure schema_refused(const std::string& name, int version, int current) {
  if (version > current)
    return Failure(FailureKind::unavailable,
                   fmt::format("database {} has schema version {}, newer than this taskd knows ({}); upgrade taskd",
                               name, version, current));
  return Failure(FailureKind::unavailable,
                 fmt::format("database {} has schema version {}, older than this taskd's ({}): run `taskd migrate` "
                             "to bring it forward (commands that only read never change it)",
                             name, version, current));
}

Failure backup_exists(const fs::path& backup) {
  return Failure(FailureKind::unavailable,
                 fmt::format("the backup {} already exists: move it away first (taskd migrate never writes over a "
                             "file)",
                             backup.string()));
}

core::Result<SchemaPlan> schema_plan(Database& db) {
  return guarded(db, [&]() -> core::Result<SchemaPlan> {
    auto& connection = db.connection();
    auto steps = migrations(connection.schema_sql());
    SchemaPlan plan{.version = connection.stored_schema_version(), .current = steps.back().version, .steps = {},
                    .backup = std::nullopt};
    if (plan.version > plan.current) throw schema_refused(db.name(), plan.version, plan.current);
    for (const auto& step : steps)
      if (step.version > plan.version) plan.steps.push_back({step.version, std::string(summary(step.sql))});
    if (plan.version > 0 && !plan.steps.empty()) plan.backup = connection.backup_path(plan.version);
    if (plan.backup && name_taken(*plan.backup)) throw backup_exists(*plan.backup);
    return plan;
  });
}

core::Result<void> migrate_schema(Database& db) {
  return guarded(db, [&]() -> core::Result<void> {
    db.connection().migrate_schema();
    return {};
  });
}

core::Result<int> notice_socket(Database& db) {
  return guarded(db, [&]() -> core::Result<int> { return db.connection().notice_socket(); });
}

std::int64_t stop_announcements(Database& db) { return db.connection().stop_announcements(); }

core::Result<bool> take_notices(Database& db) {
  return guarded(db, [&]() -> core::Result<bool> { return db.connection().take_notices(); });
}

void limit_waits(Database& db, WaitLimit limit) { db.connection().limit_waits(std::move(limit)); }

void bound_session(Database& db, const SessionBounds& bounds) { db.connection().bound_session(bounds); }

core::Result<std::optional<core::Time>> server_time(Database& db) {
  if (db.file()) return std::nullopt;
  return guarded(db, [&]() -> core::Result<std::optional<core::Time>> {
    auto query = db.prepare("SELECT CAST(extract(epoch FROM clock_timestamp()) * 1000 AS bigint)");
    return std::optional(core::from_unix_ms(query.single_int64()));
  });
}

core::Result<std::string> transport_warning(Database& db) {
  return guarded(db, [&]() -> core::Result<std::string> { return db.connection().transport_warning(); });
}

core::Result<void> check_safe_to_run(const Database& db) {
  auto safe = db.file() ? check_opened_file_safe(db) : check_private_directory(db.local_stem().parent_path());
  if (!safe) return core::fail(safe.error().kind, "refusing to run tasks: " + safe.error().message);
  return {};
}

core::Result<void> check_private_database_file(const Database& db) {
  if (!db.file()) return {};
  return check_opened_file_safe(db);
}

WriteTransaction::WriteTransaction(Database& db, WriteScope scope) : db_(db) { db_.connection().begin_write(scope); }

WriteTransaction::~WriteTransaction() {
  if (!committed_) db_.connection().rollback();
}

void WriteTransaction::commit() {
  db_.connection().commit();
  committed_ = true;
}

}  // namespace taskd::store
