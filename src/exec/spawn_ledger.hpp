#pragma once
// The spawn ledger: which child a worker started for which attempt, written
// by the child itself between vfork() and execve(), before any of the
// task's code runs. A worker records its children's pids in the database
// only after it has started them; if it dies in between, recovery finds the
// pids here, even of a child that cleared its environment (`env -i`, sudo),
// so its process group can be killed before the task runs again.
//
// One file per worker process, next to the database (the database's
// directory is taskd's, and recovery may run in another taskd process):
// "DB-spawns.PID.START_TICKS", one "TAG PID" line per child. The worker
// empties it once the children are in the database and removes it when it
// ends; recovery removes the ledger of a worker that died.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace taskd::exec {

class SpawnLedger {
 public:
  // Creates the ledger at `path` anew, readable by this user only (whatever
  // was at `path` is unlinked, never opened).
  static core::Result<SpawnLedger> create(std::string path);
  SpawnLedger(SpawnLedger&& other) noexcept;
  SpawnLedger& operator=(SpawnLedger&&) = delete;
  SpawnLedger(const SpawnLedger&) = delete;
  // Closes and removes the file.
  ~SpawnLedger();

  // The descriptor children append to (close-on-exec, O_APPEND).
  int fd() const { return fd_; }
  // Forgets every entry, once their children are recorded elsewhere.
  void clear();

 private:
  SpawnLedger(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

// Where the worker `pid` that started at `start_ticks` keeps the ledger of
// its children for the database at `db_path`.
std::string spawn_ledger_path(const std::filesystem::path& db_path, pid_t pid, std::int64_t start_ticks);

// The pid the ledger at `path` lists for `tag`; 0 when it lists none (or
// there is no such ledger).
pid_t find_in_spawn_ledger(const std::string& path, std::string_view tag);

// Removes the ledger of a worker that is gone; no ledger is no error.
void remove_spawn_ledger(const std::string& path);

}  // namespace taskd::exec
