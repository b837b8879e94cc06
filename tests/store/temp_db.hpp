#pragma once
// A database file in a fresh private directory, removed with the fixture.
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/policy.hpp"
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

struct TempDb {
  TempDir dir;
  std::filesystem::path path = dir.path() / "taskd.db";
  store::Database db = store::Database::open(path).value();
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
  auto state = core::on_create(core::schedule_of(d).value(), now, start_now);
  auto id = store::insert_task(db, d, state, now).value();
  return {id, std::move(d), state};
}

}  // namespace taskd::test
