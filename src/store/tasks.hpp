#pragma once
// Tasks in the database: definitions and state. Callers group these calls in
// store::write when they change state together.
#include <cstdint>
#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/task.hpp"
#include "store/database.hpp"

namespace taskd::store {

// What is wrong with one column of a task row.
struct ColumnProblem {
  std::string column;  // as the tasks table names it: "env", "next_run_at"
  std::string what;    // "not a JSON array of [name, value] pairs of strings: \"{\""
};

// A task row that does not read as a task: one written by hand (sqlite3,
// psql) or damaged. `readable` is what could be read of it, its id and name
// always; each column in `problems` leaves its field at the default. taskd
// runs no such task and computes with none of the columns that did not
// read; show, edit and rm reach it by its name.
struct MalformedTask {
  core::Task readable;
  std::vector<ColumnProblem> problems;
};

// A row of the tasks table as read: the task, or a malformed row.
using StoredTask = std::expected<core::Task, MalformedTask>;

// What can be read of a row, malformed or not (its id and name at least).
const core::Task& readable(const StoredTask& task);

// What is wrong with a malformed row, in a line: "env: not a JSON array of
// [name, value] pairs of strings: \"{\"; retry: …".
std::string describe_problems(const std::vector<ColumnProblem>& problems);

// The error of a command that cannot act on a malformed task (trigger,
// pause, apply …): it names the task, what is wrong, and edit and rm.
core::Error malformed_task_error(const MalformedTask& task);

struct TaskFilter {
  std::vector<std::string> names;  // only these; empty: any
  std::string group;               // empty: any
  std::string owner;               // empty: any
  std::string on_host;             // only the tasks pinned to this host (--on-host); empty: any
  std::optional<core::Condition> condition;
  std::string name_glob;  // a GLOB pattern over the name (case-sensitive); empty: any
  std::string after;      // only names after this one, for the next page; empty: from the first
  std::optional<std::int64_t> limit;
};

// Calls `visit` with each task the filter selects, in name order, as the
// rows are read: nothing but the current row is held, so a listing of a
// million tasks takes no more memory than one of ten. A malformed row is
// visited as one. An error `visit` returns ends the walk and is returned.
using TaskVisitor = std::function<core::Result<void>(const StoredTask&)>;
core::Result<void> for_each_task(Database& db, const TaskFilter& filter, const TaskVisitor& visit);

// Calls `visit` with each row of `columns` (SQL over the table tasks) of the
// tasks the filter selects, in name order, as the rows are read.
core::Result<void> for_each_task_row(Database& db, const TaskFilter& filter, std::string_view columns,
                                     const std::function<void(const Query&)>& visit);

// How many tasks the filter selects, its limit aside.
core::Result<std::int64_t> count_tasks(Database& db, const TaskFilter& filter);

// As for_each_task, with only what `list` shows read: the definition's
// name, command, schedule kind, spec, tz, dtstart and after_finish, and
// the state's next_run_at, last_status, paused and disabled_until_update;
// every other field keeps its default. A row is malformed here only for a
// column read that does not read by itself (a schedule spec or zone that
// does not parse is found by for_each_task).
core::Result<void> for_each_task_headline(Database& db, const TaskFilter& filter, const TaskVisitor& visit);

// The SQL for_each_task runs for `filter` (tests read its query plan).
std::string task_query_sql(const TaskFilter& filter);

// The tasks that can start before `until`: not paused or disabled, with a
// next_run_at before it, in next_run_at order (the tick's index).
core::Result<void> for_each_task_starting_before(Database& db, core::Time until, const TaskVisitor& visit);

// Adds a task; a name already taken is a bad_input error.
core::Result<std::int64_t> insert_task(Database& db, const core::TaskDefinition& definition,
                                       const core::TaskState& state, core::Time now);

// Replaces a task's definition (not its name), keeping its state and history.
core::Result<void> update_definition(Database& db, std::int64_t task_id, const core::TaskDefinition& definition,
                                     core::Time now);

// The task row with that name or id, malformed or not; none when there is none.
core::Result<std::optional<StoredTask>> find_stored_task(Database& db, std::string_view name);
core::Result<std::optional<StoredTask>> find_stored_task(Database& db, std::int64_t id);
// As find_stored_task, for a caller that can do nothing with a malformed
// row: it is the error malformed_task_error.
core::Result<std::optional<core::Task>> find_task(Database& db, std::string_view name);
core::Result<std::optional<core::Task>> find_task(Database& db, std::int64_t id);
// When the task was added; none for a task that is gone. A created_at
// that does not read is a bad_input error.
core::Result<std::optional<core::Time>> task_created_at(Database& db, std::int64_t id);
// The owners of the tasks, each once ("" for tasks without one), malformed
// rows' too: read from the owner index, not the rows.
core::Result<std::vector<std::string>> task_owners(Database& db);
// The tasks for_each_task visits, collected (for selections that are small).
core::Result<std::vector<StoredTask>> list_tasks(Database& db, const TaskFilter& filter);

// Tasks whose next_run_at has come, not paused or disabled, earliest first;
// on a server, locked until the transaction ends, less those another
// transaction holds.
core::Result<std::vector<StoredTask>> due_tasks(Database& db, core::Time now, int limit);
// How many tasks that are not paused or disabled have had their next run
// come at or before `due_by` (one range of the index tasks_due).
core::Result<std::int64_t> count_due_tasks(Database& db, core::Time due_by);
// On a server: whether a task is due at `now` that another transaction
// held when due_tasks passed it over, waiting (outside any transaction of
// the caller's) until that transaction has ended, so that a tick takes
// every due task before it is done. False at once on a SQLite file.
core::Result<bool> wait_for_held_due_task(Database& db, core::Time now);
// Waits until no other transaction holds the row of task `id`: its lock
// taken and let go in one statement outside any transaction, which holds
// no other lock meanwhile and so cannot close a cycle of waits (a locking
// statement over several rows keeps the ones it passed).
core::Result<void> wait_for_task(Database& db, std::int64_t id);

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

// The SQL of due_tasks on `db` (?1 now, ?2 the limit) and tick_work (?1
// now): tests read their query plans.
const std::string& due_tasks_sql(const Database& db);
const std::string& tick_work_sql();

// The tasks of --cron @reboot: each keeps the boot (the kernel's boot id)
// under which it last ran or was added, '' before its host saw it.

// Records `boot_id` as the boot task `task_id` was added under (add, or an
// edit to @reboot): it runs from the next boot on.
core::Result<void> set_task_boot(Database& db, std::int64_t task_id, std::string_view boot_id);

// At a tick on `host` under `boot_id`: each @reboot task of the host (its
// --on-host, or none) kept under another boot is due at `now`, and one
// kept under none ('') is not; both now keep `boot_id`. One statement, so
// that of two schedulers ticking on one machine only one makes a task due.
// A paused or disabled task keeps the boot without running for it. A probe
// on the index tasks_at_boot spares the write when nothing changes. Nothing
// without a boot id (a machine that tells none).
core::Result<void> make_due_at_boot(Database& db, std::string_view host, std::string_view boot_id, core::Time now);

// On a server, locks the rows of the tasks `ids` and of their followers
// (the tasks --after one of them: an attempt's end may queue their runs)
// until the transaction ends, all in the order of their ids, waiting for
// the transactions that hold them (WriteScope::rows), and returns them as
// read under the lock: the statement that locks them reads them too.
// Nothing on a SQLite file, whose write transaction has it all: none read.
core::Result<std::optional<std::vector<StoredTask>>> lock_tasks_and_followers(Database& db,
                                                                              const std::vector<std::int64_t>& ids);

// The tasks --after the task named `name`, in the order of their ids.
core::Result<std::vector<StoredTask>> followers_of(Database& db, std::string_view name);

// The upstream of each task that has one (--after), by name.
core::Result<core::UpstreamOf> task_upstreams(Database& db);

// The tasks --after a task that does not exist (one just removed), with
// their upstreams.
core::Result<core::UpstreamOf> followers_of_missing_tasks(Database& db);

// Disables a task until its next update, for `reason`, writing nothing
// else of its state: for a malformed row, whose state may not read.
core::Result<void> disable_task(Database& db, std::int64_t task_id, std::string_view reason, core::Time now);

// Writes a task's state.
core::Result<void> save_state(Database& db, std::int64_t task_id, const core::TaskState& state, core::Time now);

// Writes a task's state only if its current attempt is still `attempt_uid`
// (fencing); false when another attempt has superseded it.
core::Result<bool> save_state_fenced(Database& db, std::int64_t task_id, const std::string& attempt_uid,
                                     const core::TaskState& state, core::Time now);

// What a claim reads of queued run `run_id`'s task, in one round trip: the
// task, the $TASKD_STATE contents kept for it, and whether the run may start
// at `now` on `host` (next_queued_runs' condition, read again: a run
// claimed before it in the same transaction may have filled its task or
// group, and on a server another host's claim, whose group lock this one
// waited for). None when the task is gone.
struct TaskToClaim {
  StoredTask task;
  std::string state_blob;
  bool claimable = false;
};
core::Result<std::optional<TaskToClaim>> find_task_to_claim(Database& db, std::int64_t run_id, std::int64_t task_id,
                                                            core::Time now, std::string_view host);
core::Result<void> save_state_blob(Database& db, std::int64_t task_id, const std::string& blob);

core::Result<int> remove_task(Database& db, std::int64_t task_id);

// Gives the task `task_id`, named `old_name`, the name `new_name` (unused:
// the caller makes sure of it), and the tasks chained after it (--after)
// follow it; its id keeps its state, history and runs. Returns how many
// followers followed.
core::Result<std::int64_t> rename_task(Database& db, std::int64_t task_id, const std::string& old_name,
                                       const std::string& new_name);

}  // namespace taskd::store
