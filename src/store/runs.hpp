#pragma once
// Runs in the database: the queue (status queued), the runs in flight
// (running) and the history (every other status). Every outcome write is
// conditional on the run's attempt_uid (fencing).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "core/usage.hpp"
#include "core/policy.hpp"
#include "core/task.hpp"
#include "store/database.hpp"

namespace taskd::store {

struct RunRecord {
  std::int64_t id = 0;
  std::int64_t task_id = 0;
  std::string task;
  core::RunStatus status = core::RunStatus::queued;
  core::Trigger trigger = core::Trigger::schedule;
  core::Time scheduled_at;
  core::Time enqueued_at;
  core::Time not_before;  // its slot plus its jitter: not started sooner
  std::optional<core::Time> started_at;
  std::optional<core::Time> finished_at;
  std::optional<core::Time> deadline_at;
  std::optional<int> exit_code;
  std::optional<int> signal;
  int attempt_no = 0;
  std::string attempt_uid;
  std::int64_t run_index = 0;
  std::string reason;
  std::int64_t output_bytes = 0;
  bool output_truncated = false;
  core::ResourceUsage usage;  // of an attempt that ran and ended
  std::optional<std::int64_t> upstream_run_id;  // the run of the --after task that queued (or skipped) it
  std::string host;                             // of the worker that started its attempt; empty before
};

// Who runs an attempt: enough to tell later whether that process still lives.
struct WorkerIdentity {
  std::string host;
  std::string boot_id;
  pid_t pid = 0;
  std::int64_t started_at = 0;  // the process start time, to tell pid reuse
  std::int64_t uid = -1;        // the user it runs as (effective uid); -1: not known
};

// A RUNNING run and who runs it: what recovery needs to judge it lost.
struct InFlightRun {
  std::int64_t id = 0;
  std::int64_t task_id = 0;
  std::string task;
  core::Trigger trigger = core::Trigger::schedule;
  std::string attempt_uid;
  WorkerIdentity worker;
  pid_t child_pid = 0;
  std::int64_t child_started_at = 0;
  std::optional<core::Time> lease_expires_at;
  std::optional<core::Time> started_at;
  std::optional<core::Time> deadline_at;
};

// A QUEUED run serving `slot`, to be claimed no sooner than `not_before`
// (its jitter), or at once; `upstream_run_id`: the run of the task's
// upstream (--after) that queued it.
core::Result<std::int64_t> insert_queued_run(Database& db, const core::Task& task, core::Time slot,
                                             core::Trigger trigger, core::Time now,
                                             std::optional<core::Time> not_before = std::nullopt,
                                             std::optional<std::int64_t> upstream_run_id = std::nullopt);
// A QUEUED run as insert_queued_run makes it, and the task's state `state`
// written with it (one statement on a server).
core::Result<std::int64_t> queue_run_saving_state(Database& db, const core::Task& task, core::Time slot,
                                                  core::Trigger trigger, core::Time now,
                                                  std::optional<core::Time> not_before, const core::TaskState& state);

// A QUEUED retry of `run`, a manual run with its own ladder (a backfilled
// one, a chain's): attempt `attempt_no` of the same slot, for the same
// upstream run, claimable from `not_before`.
core::Result<std::int64_t> insert_retry_of(Database& db, const core::Task& task, const RunRecord& run, int attempt_no,
                                           core::Time now, core::Time not_before);

// QUEUED backfilled runs of `task` (manual runs serving the past `slots`,
// taskd(1) backfill), each attempt `attempt_no` of its slot, claimable from
// `not_before`; their ids, in the order of `slots`, which must be distinct
// and before `now`. A few statements for any number of slots.
core::Result<std::vector<std::int64_t>> insert_backfill_runs(Database& db, const core::Task& task,
                                                             const std::vector<core::Time>& slots, int attempt_no,
                                                             core::Time now, core::Time not_before);

// The slots in [from, until) that a backfilled run of the task, queued or
// running, serves; oldest first.
core::Result<std::vector<core::Time>> pending_backfill_slots(Database& db, std::int64_t task_id, core::Time from,
                                                             core::Time until);

// One SKIPPED row standing for `skipped.count` slots; or, with
// `upstream_run_id`, for the manual run that run of the task's upstream
// (--after) could not queue.
core::Result<void> insert_skipped_run(Database& db, std::int64_t task_id, const core::SkippedSlots& skipped,
                                      core::Time now, std::optional<std::int64_t> upstream_run_id = std::nullopt);

// Whether the task has a run queued or running.
core::Result<bool> has_active_run(Database& db, std::int64_t task_id);

// Queued runs that may start at `now`, highest priority first, then in the
// order they were queued. A run may start when its jitter has passed, its
// task is not paused (a manual run starts anyway), no other run of its task
// is running, and its group is below its concurrency cap.
// Only the runs of tasks this host may run: without --on-host, or on `host`.
// On a server their tasks are locked until the transaction ends, and the
// runs of tasks another transaction holds are left for a later claim.
core::Result<std::vector<RunRecord>> next_queued_runs(Database& db, core::Time now, int limit, std::string_view host);
// Its SQL on `db` (?1 now, ?2 the limit, ?3 the host): tests read its query plan.
const std::string& next_queued_runs_sql(const Database& db);
// Its condition on a run `r` of a task `t` (?1 now, ?3 the host), which
// find_task_to_claim reads again for one run.
const std::string& claimable_run_condition();

// On a server: whether a run may be claimed now whose task another
// transaction held when a claim passed it over, waiting (outside any
// transaction of the caller's) until that transaction has ended. Without
// it a worker that found nothing to claim would take the queue for empty
// while another host's claim or attempt's end held a task for a moment.
// False at once on a SQLite file, whose claims pass nothing over.
core::Result<bool> wait_for_held_claimable_run(Database& db, core::Time now, std::string_view host);

// On a server, locks the rows of the capped groups of `task_ids` until the
// transaction ends, in the order of their names, waiting for the claims
// that hold them: two hosts then cannot both count a group's last free
// place. Nothing on a SQLite file, whose write transaction has it all.
core::Result<void> lock_groups_of(Database& db, const std::vector<std::int64_t>& task_ids);

// Brings the engine's statistics of the runs up to date, after a herd has
// queued many runs at once. PostgreSQL plans by its statistics, which
// autovacuum refreshes a minute or so later: until then it takes the queue
// for empty and sorts all of it at every claim (10 000 queued runs: 6 ms a
// claim) instead of walking runs_queue to the first claimable run. SQLite
// plans without statistics: nothing to do.
core::Result<void> refresh_run_statistics(Database& db);

// QUEUED -> DROPPED for every queued run of the task; returns how many.
core::Result<int> drop_queued_runs(Database& db, std::int64_t task_id, const std::string& reason, core::Time now);

// QUEUED -> DROPPED; false if the run was no longer queued.
core::Result<bool> mark_dropped(Database& db, std::int64_t run_id, const std::string& reason, core::Time now);

struct StartRecord {
  std::int64_t run_id;
  std::string attempt_uid;
  int attempt_no;
  std::int64_t run_index;
  core::Time started_at;
  core::Time deadline_at;
  core::Time lease_expires_at;
  WorkerIdentity worker;
};
// QUEUED -> RUNNING, and task `task_id`'s state `state` written with it
// (one statement on a server); false, and nothing written, if another
// worker claimed the run first.
core::Result<bool> mark_running(Database& db, const StartRecord& start, std::int64_t task_id,
                                const core::TaskState& state, core::Time now);

// A child started for a run: its pid and start time, so that a later
// recovery can kill what a dead worker left running.
struct ChildRecord {
  std::int64_t run_id;
  pid_t pid;
  std::int64_t started_at;
};
// Records the children in their runs, in one statement: each run is its
// worker's alone to write, so it takes no write lock.
core::Result<void> set_children(Database& db, const std::vector<ChildRecord>& children);

// A running attempt whose lease its worker keeps.
struct HeldLease {
  std::int64_t run_id;
  std::string attempt_uid;
};
// A lease extended, and why another host asked its run to stop ('': it
// did not); or, `held`, a lease left as it was because another transaction
// held its run's row.
struct RenewedLease {
  std::int64_t run_id;
  std::string stop_reason;
  bool held = false;
};
// Stores the output a running attempt has written so far, at once or not at
// all when a SQLite file's write lock is held (a server's row lock is waited
// for as any statement's): whether it was written. Nothing when the run is
// no longer that attempt running.
core::Result<bool> write_output_so_far(Database& db, const HeldLease& attempt, std::string_view output,
                                       bool truncated);

// Extends the lease of each run to `until` plus its task's kill grace, in
// one statement, while it is the attempt running; returns the leases it
// extended and, on a server, those of runs whose rows another transaction
// holds, which it neither waits for nor extends (a run that is missing was
// taken from its worker: recovered as lost, or replaced). Takes no write
// lock and waits for none.
core::Result<std::vector<RenewedLease>> renew_leases(Database& db, const std::vector<HeldLease>& leases,
                                                     core::Time until);

// Asks the running attempt of a run to stop, for `reason`: its worker ends
// it at its next renewal (see RenewedLease).
core::Result<void> ask_to_stop(Database& db, std::int64_t run_id, const std::string& attempt_uid,
                               const std::string& reason);

// Every run in status running.
core::Result<std::vector<InFlightRun>> running_runs(Database& db);

// The task's running run, if any.
core::Result<std::optional<InFlightRun>> running_run_of(Database& db, std::int64_t task_id);

struct FinishRecord {
  std::int64_t run_id;
  std::string attempt_uid;
  core::RunStatus status;
  core::Time finished_at;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string reason;
  std::string output;
  bool output_truncated = false;
  core::ResourceUsage usage;
};
// RUNNING -> a final status, only for the attempt that is running; false
// (and nothing written) for a stale attempt_uid.
core::Result<bool> finish_run(Database& db, const FinishRecord& finish);
// finish_run, and task `task_id`'s state `state` written with it when it
// finished the run; then the task's history pruned to its `keep_runs` newest
// runs (prune_history), whether it did or not. One statement on a server.
core::Result<bool> finish_run_saving_state(Database& db, const FinishRecord& finish, std::int64_t task_id,
                                           const core::TaskState& state, int keep_runs, core::Time now);

// A running attempt that taskd's shutdown ended: its run goes back to the
// queue for the same slot, as it was queued (its attempt number and run
// index), with `reason` saying why; what the attempt wrote in it is cleared.
struct RequeueRecord {
  std::int64_t run_id;
  std::string attempt_uid;
  int attempt_no;
  std::int64_t run_index;
  std::string reason;
};
// RUNNING -> QUEUED, only for the attempt that is running; false (and
// nothing written) for a stale attempt_uid.
core::Result<bool> requeue_run(Database& db, const RequeueRecord& requeue);

// Deletes the task's finished runs beyond the newest `keep` rows, so history
// stays bounded. Queued and running runs are never deleted.
core::Result<int> prune_history(Database& db, std::int64_t task_id, int keep);

// Deletes up to `batch` finished runs whose slot is before `cutoff`, oldest
// first (`--keep-days`); returns how many.
core::Result<int> prune_runs_before(Database& db, core::Time cutoff, int batch);

// Whether a finished run has a slot before `cutoff`: one probe of runs_slot.
core::Result<bool> has_runs_before(Database& db, core::Time cutoff);

// The earliest slot of the runs history keeps of the task; none without runs.
core::Result<std::optional<core::Time>> oldest_run_slot(Database& db, std::int64_t task_id);

// Which runs `history` shows; every filter is optional. Times select by the
// slot a run serves (scheduled_at), in [since, until); with either, the runs
// come newest slot first, else newest run first.
struct RunFilter {
  std::int64_t task_id = 0;                // 0: every task
  std::vector<core::RunStatus> statuses;  // a run with any of them; empty: any status
  std::optional<core::Trigger> trigger;
  std::optional<core::Time> since;
  std::optional<core::Time> until;
  std::optional<std::int64_t> limit;
  // The page after run `before`: only the runs that come after it in this
  // listing's order (0: from the first).
  std::int64_t before = 0;
};

// Calls `visit` with each run the filter selects, newest first, as the rows
// are read (nothing else is held). An error `visit` returns ends the walk.
using RunVisitor = std::function<core::Result<void>(const RunRecord&)>;
core::Result<void> for_each_run(Database& db, const RunFilter& filter, const RunVisitor& visit);

// The SQL for_each_run runs for `filter` (tests read its query plan).
std::string run_query_sql(const RunFilter& filter);

// The newest runs first, of one task or (task_id 0) of all.
core::Result<std::vector<RunRecord>> list_runs(Database& db, std::int64_t task_id, int limit);
core::Result<std::optional<RunRecord>> find_run(Database& db, std::int64_t run_id);
core::Result<std::string> run_output(Database& db, std::int64_t run_id);
// A run's status and output as stored now, read together (the output of a
// run in flight is what it had written a second ago at most); none when the
// run is gone.
struct StoredOutput {
  core::RunStatus status;
  std::string output;
  bool truncated = false;
};
core::Result<std::optional<StoredOutput>> stored_output(Database& db, std::int64_t run_id);

// What a sleeping scheduler waits for, each strictly after `now`: the
// earliest next_run_at of a task that can be due, and the earliest
// not_before of a queued run of a task that is not paused and that `host`
// may run; and the earliest lease of a running run, past or not.
struct Upcoming {
  std::optional<core::Time> next_due;
  std::optional<core::Time> next_claimable;
  std::optional<core::Time> earliest_lease_end;
};
core::Result<Upcoming> upcoming_after(Database& db, core::Time now, std::string_view host);

// A number that changes when another connection commits to the database:
// SQLite's PRAGMA data_version, or the count of a server's change notices
// (take_notices) from other connections.
core::Result<std::int64_t> data_version(Database& db);

}  // namespace taskd::store
