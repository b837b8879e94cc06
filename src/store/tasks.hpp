#pragma once
// Tasks in the database: definitions and state. Callers group these calls in
// a WriteTransaction when they change state together.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/task.hpp"
#include "store/database.hpp"

namespace taskd::store {

struct TaskFilter {
  std::string group;  // empty: any
  std::string owner;  // empty: any
};

// Adds a task; a name already taken is a bad_input error.
core::Result<std::int64_t> insert_task(Database& db, const core::TaskDefinition& definition,
                                       const core::TaskState& state, core::Time now);

// Replaces a task's definition (not its name), keeping its state and history.
core::Result<void> update_definition(Database& db, std::int64_t task_id, const core::TaskDefinition& definition,
                                     core::Time now);

core::Result<std::optional<core::Task>> find_task(Database& db, std::string_view name);
core::Result<std::optional<core::Task>> find_task(Database& db, std::int64_t id);
core::Result<std::vector<core::Task>> list_tasks(Database& db, const TaskFilter& filter);

// Tasks whose next_run_at has come, not paused or disabled, earliest first.
core::Result<std::vector<core::Task>> due_tasks(Database& db, core::Time now, int limit);

// What a tick at `now` may have to do. One probe on the indexes, read
// without the write lock, so that an idle tick prepares and runs none of the
// wide queries and takes no write lock.
struct TickWork {
  bool due = false;        // a task is due: the enqueue
  bool running = false;    // a run is running: recovery checks on its worker
  bool claimable = false;  // a run is queued and its jitter has passed: a claim
  bool workers = false;    // the workers table has a row: recovery checks on its process
};
core::Result<TickWork> tick_work(Database& db, core::Time now);

// Writes a task's state.
core::Result<void> save_state(Database& db, std::int64_t task_id, const core::TaskState& state, core::Time now);

// Writes a task's state only if its current attempt is still `attempt_uid`
// (fencing); false when another attempt has superseded it.
core::Result<bool> save_state_fenced(Database& db, std::int64_t task_id, const std::string& attempt_uid,
                                     const core::TaskState& state, core::Time now);

// The $TASKD_STATE contents kept for the task.
core::Result<std::string> load_state_blob(Database& db, std::int64_t task_id);
core::Result<void> save_state_blob(Database& db, std::int64_t task_id, const std::string& blob);

core::Result<int> remove_task(Database& db, std::int64_t task_id);

}  // namespace taskd::store
