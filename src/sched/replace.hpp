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

// A replaced attempt's child, to stop once the transaction has committed.
struct ChildToStop {
  pid_t pid = 0;
  std::int64_t started_at = 0;
};

// Inside the caller's transaction: the task's running attempt ends as FAILED
// "replaced" (fenced on its attempt_uid, so its worker's late report is
// stale), `state` forgets it, and older queued runs are dropped. Returns the
// child to stop.
core::Result<std::optional<ChildToStop>> replace_active_runs(store::Database& db, std::int64_t task_id,
                                                             core::TaskState& state, core::Time slot,
                                                             core::Time now);

// SIGTERM to each child's process group; its own worker's timebox kills it
// if it lingers.
void stop_children(const ProcessTable& processes, const std::vector<ChildToStop>& children);

}  // namespace taskd::sched
