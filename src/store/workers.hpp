#pragma once
// The taskd processes running the loop on this file (`run`, `work`), busy or
// idle: each adds its row when it starts, refreshes its heartbeat while it
// runs and deletes the row when it ends; `status` lists them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/time.hpp"
#include "store/database.hpp"
#include "store/runs.hpp"

namespace taskd::store {

struct WorkerRow {
  std::int64_t id = 0;
  std::string role;  // "run" or "work"
  WorkerIdentity identity;
  int concurrency = 1;
  core::Time started_at;
  core::Time heartbeat_at;
  std::string machine_id;  // /etc/machine-id: the same machine after a reboot; '' when unknown
  core::Millis clock_offset{0};  // its clock minus the database's, as it last measured
  // How it keeps its runs' descendants: "cgroup PATH" or "subreaper (WHY)".
  std::string containment;
};

// Adds the row (its `id` is ignored); returns its id. With `alive_since`,
// refused (bad input) while a worker of another machine (another boot id)
// under the same host name has a heartbeat at or after it: two machines
// under one name would take each other's runs for their own.
core::Result<std::int64_t> register_worker(Database& db, const WorkerRow& worker,
                                           std::optional<core::Time> alive_since = std::nullopt);

// The same refusal, for a taskd that does not register (run-once, tick).
core::Result<void> check_host_id_free(Database& db, const WorkerRow& worker, core::Time alive_since);

// Sets the row's heartbeat to `now` and its clock offset; false when the
// row is gone (someone judged the worker dead, or removed a long-silent
// one). Takes no write lock.
core::Result<bool> heartbeat_worker(Database& db, std::int64_t id, core::Time now, core::Millis clock_offset);

// Deletes the row; a row already gone is no error.
core::Result<void> unregister_worker(Database& db, std::int64_t id);

// Every row, oldest first.
core::Result<std::vector<WorkerRow>> list_workers(Database& db);

// The newest heartbeat of the rows of `role` ("run": the schedulers); none
// without such a row.
core::Result<std::optional<core::Time>> newest_heartbeat(Database& db, std::string_view role);

// The ticks of run-once on a host: a scheduler that cron calls, which keeps
// no worker row.
struct TickRow {
  std::string host;
  core::Time last_at;               // when its last tick began
  std::optional<core::Millis> every;  // about how often it ticks; none after its first tick
};

// Records a tick of run-once on `host` beginning `at` (a tick older than the
// one recorded is ignored), unless another process holds a SQLite file's
// write lock: a tick never waits to be recorded, the next one counts.
core::Result<void> record_tick(Database& db, const WorkerIdentity& self, core::Time at);

// Whom a scheduler of the database runs as: a registered one (taskd run,
// work) or one that ticked since `ticked_since` (run-once, tick); none for
// one of a taskd that did not record it.
struct SchedulerUser {
  std::string host;
  std::optional<std::int64_t> uid;
};
core::Result<std::vector<SchedulerUser>> scheduler_users(Database& db, core::Time ticked_since);

// Every host's, the newest first.
core::Result<std::vector<TickRow>> list_ticks(Database& db);

}  // namespace taskd::store
