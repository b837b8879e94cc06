#pragma once
// A test's database: a SQLite file in a fresh private directory, removed
// with the fixture; or, when TASKD_TEST_POSTGRESQL names a database on a
// throwaway server (tests/store/on_postgresql.py runs the tests so), that
// database with its schema made anew.
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/policy.hpp"
#include "store/columns.hpp"
#include "store/database.hpp"
#include "store/tasks.hpp"

namespace taskd::test {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "taskd-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The server database the tests run on; empty: SQLite files.
inline std::string test_server() {
  const char* uri = std::getenv("TASKD_TEST_POSTGRESQL");
  return uri ? uri : "";
}

inline store::Database open_fresh(const std::string& location, const std::filesystem::path& state_dir) {
  store::OpenOptions options{.state_dir = state_dir};
  auto db = store::Database::open(location, options).value();
  if (!store::is_server_uri(location)) return db;
  db.prepare("DROP SCHEMA taskd CASCADE").exec();
  return store::Database::open(location, options).value();
}

struct TempDb {
  TempDir dir;
  // The SQLite file (also named when the tests run on a server: a test of
  // this host's files beside the database may use it).
  std::filesystem::path path = dir.path() / "taskd.db";
  // What Database::open takes to open this database again.
  std::string location = test_server().empty() ? path.string() : test_server();
  store::Database db = open_fresh(location, dir.path());
};

inline core::TaskDefinition every_definition(std::string name, core::Seconds interval) {
  core::TaskDefinition d;
  d.name = std::move(name);
  d.command = {{"/bin/true"}, false};
  d.schedule_kind = core::ScheduleKind::every;
  d.schedule_spec = core::format_duration(interval);
  d.retry = core::default_retry_ladder();
  return d;
}

// Adds a task as `taskd add` does, created at `now`.
inline core::Task add_task(store::Database& db, core::TaskDefinition d, core::Time now, bool start_now = false) {
  auto schedule = core::schedule_of(d).value();
  auto state = core::on_create(schedule, now, start_now);
  auto id = store::insert_task(db, d, state, now).value();
  return {id, std::move(d), state, std::move(schedule)};
}

}  // namespace taskd::test
