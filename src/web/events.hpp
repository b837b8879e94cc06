#pragma once
// What /api/v1/events tells, as server-sent-event text: a run that was
// queued, started or ended ("event: run", its history --json shape) and any
// other change to the database ("event: change": a task added, edited,
// paused …). One feed watches the database for every stream: on a SQLite
// file through inotify and its data_version, on a server through its change
// notices (LISTEN); the newest runs are compared with those seen before,
// and the runs seen queued or running that newer ones pushed out of them are
// read by id (a queued run dropped is told as a run, its status "dropped"
// and its reason).
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "core/task.hpp"
#include "sched/change_watch.hpp"
#include "store/database.hpp"

namespace taskd::web {

class EventFeed {
 public:
  explicit EventFeed(std::function<core::Result<store::Database>()> open) : open_(std::move(open)) {}

  // Waits at most `wait` for a change, and returns the events it makes
  // (empty: none). A database that cannot be read is opened again at the
  // next call.
  std::string next(std::chrono::milliseconds wait);
  // Whether the feed watches the database: opened, and what was there seen.
  bool watching() const { return db_ != nullptr; }

 private:
  core::Result<void> connect();
  // Lets the database go after an error: the next call opens it again, and
  // what is there then is not news.
  void rest();
  core::Result<std::string> changes(bool tell);

  std::function<core::Result<store::Database>()> open_;
  std::unique_ptr<store::Database> db_;
  std::optional<sched::ChangeWatch> watch_;
  std::int64_t version_ = 0;
  std::map<std::int64_t, core::RunStatus> runs_;  // the newest runs and older ones running, as last seen
};

}  // namespace taskd::web
