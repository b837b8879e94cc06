#pragma once
// overlap=replace: a newer run of a task takes the place of the one running.
#include <cstdint>
#include <optional>
#include <sys/types.h>
#include <vector>

#include "core/task.hpp"
#include "sched/process_table.hpp"
#include "store/database.hpp"

namespace taskd::sched {

// A replaced attempt's child, to stop once the transaction has committed;
// pid 0: not here to stop (its own worker does).
struct ChildToStop {
  pid_t pid = 0;
  std::int64_t started_at = 0;
};

// Inside the caller's transaction: older queued runs are dropped, and the
// task's running attempt is ended. On a SQLite file, one machine, it ends
// as FAILED "replaced" at once (fenced on its attempt_uid, so its worker's
// late report is stale), and its child is returned, to stop. On a server,
// whatever host runs it, it is asked to stop: its own worker ends it at its
// next lease renewal and records it, and until then it is still running, so
// the new run waits (never two attempts at once, on any two hosts). Either
// way `state` forgets the attempt. Returns the attempt's child (none on a
// server), if one was running.
core::Result<std::optional<ChildToStop>> replace_active_runs(store::Database& db, std::int64_t task_id,
                                                             core::TaskState& state, core::Time slot,
                                                             core::Time now);

// SIGTERM to each child's process group (those here); its own worker's
// timebox kills it if it lingers.
void stop_children(const ProcessTable& processes, const std::vector<ChildToStop>& children);

}  // namespace taskd::sched
