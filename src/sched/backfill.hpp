#pragma once
// `taskd backfill`: the slots of a past window queued as manual runs, each
// with its own TASKD_SCHEDULED_AT, in one transaction; and what the end of
// such a run does (core/backfill.hpp says the policy).
#include <cstdint>
#include <vector>

#include "core/backfill.hpp"
#include "sched/outcome.hpp"
#include "store/database.hpp"
#include "store/runs.hpp"

namespace taskd::sched {

// Queues a backfilled run of `task` for each of `slots` (oldest first, from
// plan_backfill) at `now`, all or none; their run ids in that order. Bad
// input when the task is gone, or when a backfilled run of a slot in the
// window is still queued or running (a second identical backfill).
core::Result<std::vector<std::int64_t>> queue_backfill(store::Database& db, const core::Task& task,
                                                       const std::vector<core::Time>& slots, core::Time now);

// Bad input when a backfilled run of the task serving a slot in the window
// of `slots` (from the first to the last) is still queued or running.
core::Result<void> check_backfill_not_pending(store::Database& db, const core::Task& task,
                                              const std::vector<core::Time>& slots);

// The end of `run`, a run with its own ladder (a backfilled one, a chain's),
// inside the caller's transaction: the task's new state, and the run's next
// attempt queued when the retry ladder gives one.
core::Result<core::FinishDecision> finish_with_own_ladder(store::Database& db, const core::Task& task,
                                                     const core::Schedule& schedule, const store::RunRecord& run,
                                                     const AttemptEnd& end, core::Time now);

}  // namespace taskd::sched
