#pragma once
// `taskd backfill`: the planned slots of a past window, queued again as
// manual runs, and the policy of those runs. A backfilled run serves an old
// slot and leaves the rotation alone: the task's next_run_at and the attempt
// count of its schedule stay; a failure retries the slot by the task's own
// ladder, as a new backfilled run of the same slot.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/policy.hpp"

namespace taskd::core {

// The planned slots in [from, until), oldest first (jitter not applied), at
// most `limit` of them: a caller that asks for one more than it allows
// learns that the window holds too many.
std::vector<Time> backfill_slots(const Schedule& schedule, Time from, Time until, std::size_t limit);

// The window of a backfill and the most slots it may hold (--max).
struct BackfillWindow {
  Time from;
  Time until;
  std::size_t max_slots = 10'000;
};

// The slots a backfill of `task` over `window` at `now` queues, oldest
// first. Bad input: a window that is empty, reversed or reaches past `now`; a
// task that is disabled or has no planned slots (--manual, --after-finish);
// a window without slots, or with more than max_slots (the message gives
// their count and --max).
Result<std::vector<Time>> plan_backfill(const Task& task, const Schedule& schedule, const BackfillWindow& window,
                                        Time now);

// Whether a run is a backfilled one: a manual run serving a slot before it
// was queued, and not queued by an upstream (whose retries keep the time of
// the first). `taskd trigger` queues its runs for the instant they are
// queued; backfill windows end at the latest at that instant and exclude it.
bool is_backfill(Trigger trigger, Time scheduled_at, Time enqueued_at, bool queued_by_upstream);

// Whether a manual run is retried by the task's ladder on its own, as a new
// run of the same slot, leaving the rotation alone: a backfilled run, and a
// run its upstream queued (--after), so each step of a chain keeps its
// retries. Such a run counts its attempts itself.
bool has_own_ladder(Trigger trigger, Time scheduled_at, Time enqueued_at, bool queued_by_upstream);

// A run with its own ladder (a backfilled one, a chain's) starts at `now`: a new attempt token and deadline, as a
// manual run, but the attempt count of the schedule stays.
StartDecision on_backfill_start(const TaskDefinition& definition, const Schedule& schedule, TaskState state, Time now,
                                std::string attempt_uid);

// A run with its own ladder ended: as a manual run's end, but a success does not end
// the schedule's failing streak nor move its next run. A permanent failure
// disables the task as always.
FinishDecision on_backfill_finish(const Schedule& schedule, TaskState state, Time now, AttemptOutcome outcome,
                                  const std::string& reason);

// When attempt `attempt_no` of a run with its own ladder that ended in `outcome` at
// `now` is tried again: the task's retry ladder at that attempt; none after
// a success, a permanent failure or the ladder's last rung.
std::optional<Time> backfill_retry_at(const TaskDefinition& definition, int attempt_no, AttemptOutcome outcome,
                                      Time now);

}  // namespace taskd::core
