#pragma once
// The task state machine of SPEC.md "Policy" (seeds 003 and 004): each
// transition takes a task, its state and `now`, and returns the new state
// and what history must record. The store writes it; nothing here does I/O.
#include <date/date.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/task.hpp"

namespace taskd::core {

// Planned slots that came due and will not run: one SKIPPED row in history.
struct SkippedSlots {
  std::int64_t count = 0;
  Time first;
  Time last;
  std::string reason;
};

// The last slot a SKIPPED row stands for, read back from its reason; none
// for a reason that names no slot.
std::optional<Time> last_skipped_slot(std::string_view reason);

// A day of --skip-calendar on which own slots of the task came due: its
// SKIPPED row names the day, and the calendar that holds it (sched/ words it).
struct SkippedDay {
  date::local_days day;
  SlotSpan slots;  // the slots the schedule has on that day without the calendars
};

// At most this many days get a row of their own when slots are accounted
// (a scheduler down for years); the days after them share one row.
inline constexpr std::size_t max_skipped_day_rows = 100;

// The days of --skip-calendar with own slots of the task in (after, until]:
// the first max_skipped_day_rows of them, oldest first, and how many more,
// from the first to the last of their slots. What was accounted as
// (accounted_until before, after) a decision, so a day gets its row once.
struct CalendarSkips {
  std::vector<SkippedDay> days;
  std::int64_t more_days = 0;
  Time more_first{};
  Time more_last{};
};
Result<CalendarSkips> calendar_skips(const TaskDefinition& definition, std::optional<Time> after,
                                     std::optional<Time> until);

// The SKIPPED row of a day, `why` naming it: "3 slots from ... to ...
// skipped: 2026-12-25 is Christmas Day in de-holidays".
SkippedSlots skipped_day(const SkippedDay& day, std::string_view why);
// The row of the days beyond the first max_skipped_day_rows: "slots on 40
// more days from ... to ... skipped: `why`" (its count is of days).
SkippedSlots skipped_more_days(const CalendarSkips& skips, std::string_view why);

// A day the task's --skip-calendar removes slots of its own schedule from.
struct CalendarSkippedDay {
  date::local_days day;
  Time first;  // its first and last slot the calendar removes
  Time last;
};

// Walks the days the task's --skip-calendar removes slots from after an
// instant, in order: a day costs two searches, however many slots it has.
// The days must outlive it.
class CalendarSkippedDays {
 public:
  CalendarSkippedDays(Schedule own, Zone zone, const std::vector<date::local_days>& days, Time from);
  std::optional<CalendarSkippedDay> next();

 private:
  Schedule own_;
  Zone zone_;
  std::span<const date::local_days> days_;  // the skipped days still to walk
  Time from_;
};
// The walk of the definition's removed days after `from`.
Result<CalendarSkippedDays> calendar_skipped_days(const TaskDefinition& definition, Time from);

// What a tick does with a task whose next_run_at has come.
struct EnqueueDecision {
  TaskState state;
  std::optional<Time> run_slot;  // the slot a new QUEUED run serves; none when skipped
  Time not_before{};             // when the run may start: its slot plus the jitter
  Trigger trigger = Trigger::schedule;
  std::optional<SkippedSlots> skipped;
};

// The outcome of an attempt, as the worker observed it.
// `permanent_failure`: the exit code is in permanent_exit; the task is
// disabled at once, with the child's own reason.
enum class AttemptOutcome { succeeded, failed, permanent_failure, timed_out, lost };

// The timebox of a run serving `slot`: --timeout, else half the interval
// (nuntium's interval / 2), at least one second; one hour with no interval.
// None with --timeout none: the run takes as long as it takes.
std::optional<Seconds> effective_timeout(const TaskDefinition& definition, const Schedule& schedule, Time slot);
// The same for a schedule whose interval around the slot is `interval`.
std::optional<Seconds> effective_timeout(const TaskDefinition& definition, std::optional<Seconds> interval);

// The interval around the epoch of `schedule`, the definition's: what the
// timeout and the tolerance a task shows rest on when it sets neither. Kept
// per schedule key (see schedule_key).
std::optional<Seconds> interval_at_epoch(const TaskDefinition& definition, const Schedule& schedule);

// The delay after its slot at which a scheduled run starts: a stable whole
// number of seconds in [0, jitter) from the task's name and the run_index the
// run will have.
Millis jitter_delay(const TaskDefinition& definition, std::int64_t run_index);

// The drop-rule tolerance: --tolerance, else 10 % of the interval.
Millis effective_tolerance(const TaskDefinition& definition, Seconds interval);

// A new task's first state: its first slot after `now` (or `now` itself with
// start_now).
TaskState on_create(const Schedule& schedule, Time now, bool start_now);

// Why the slots that came due before the one a tick serves did not run: no
// scheduler ticked while they came due, or one did, less often than they
// come (run-once from cron each minute, a task every 30s).
enum class Missed { while_no_scheduler, between_ticks };

// The tick found next_run_at <= now. `run_active` says whether the task has a
// run queued or running; with overlap=skip that turns the slot into SKIPPED.
// `missed` words the SKIPPED row of the due slots before the one served.
EnqueueDecision on_enqueue(const TaskDefinition& definition, const Schedule& schedule, TaskState state, Time now,
                           bool run_active, Missed missed = Missed::while_no_scheduler);

// The reason a queued run must be DROPPED when claimed at `now`, if any
// (seed 004: now < last_run_at + interval - tolerance). Only scheduled runs
// can be dropped.
std::optional<std::string> drop_reason(const TaskDefinition& definition, const Schedule& schedule,
                                       const TaskState& state, Trigger trigger, Time now);

// A claimed run serving `slot` starts at `now`: new attempt, its deadline,
// and the next slot after the deadline (with overlap=replace, the next slot
// stays: it is meant to take this attempt's place).
struct StartDecision {
  TaskState state;
  Time deadline;
  std::optional<SkippedSlots> skipped;
};
StartDecision on_start(const TaskDefinition& definition, const Schedule& schedule, TaskState state, Time slot,
                       Time now, std::string attempt_uid);

// An attempt ended. Success resets the attempt count and plans the next slot
// after now; anything else walks the retry ladder, which yields to the plan.
// When no rung is left, the task goes on with its next planned slot, the
// attempt count starting over there (ladder_exhausted_at says it happened),
// or with disable_when_exhausted it is disabled until the next update.
// `retry_pending`: the attempt's slot gets another attempt (a step of the
// ladder), so its outcome is not final yet (chains wait for it).
struct FinishDecision {
  TaskState state;
  std::optional<SkippedSlots> skipped;
  bool retry_pending = false;
};
FinishDecision on_finish(const TaskDefinition& definition, const Schedule& schedule, TaskState state, Time now,
                         AttemptOutcome outcome, const std::string& reason);

// A manual run (`taskd trigger`) starts or ends. It is fenced and counted
// like any attempt, but leaves the rotation alone (seed 000): next_run_at and
// last_run_at stay, so the planned slots neither move nor get dropped. A
// failure does not walk the ladder; a success ends a failing streak (the
// pending retry gives way to the next planned slot); a permanent failure
// disables the task as always.
StartDecision on_manual_start(const TaskDefinition& definition, const Schedule& schedule, TaskState state, Time now,
                              std::string attempt_uid);
FinishDecision on_manual_finish(const Schedule& schedule, TaskState state, Time now, AttemptOutcome outcome,
                                const std::string& reason);

// overlap=replace: a newer run takes the place of the running attempt, which
// ends without counting as an attempt (the newer run inherits its number);
// its late report is then stale.
TaskState on_replace(TaskState state);

// taskd shut down and ended the attempt before it was done: it does not
// count (a restart is no failure of the task). Its slot is queued again, so
// the task's attempt count, run index and last start are what they were
// before it started (`before_start`); its plan stays.
TaskState on_shutdown_end(TaskState state, const TaskState& before_start);

// The task was resumed: slots that passed while paused are skipped; a
// pending --start-now or retry is kept.
FinishDecision on_resume(const Schedule& schedule, TaskState state, Time now);

// The user enabled a disabled task (seed 003's "until the next manual
// save"): the attempt count starts over and the plan resumes from now; slots
// that passed while it was disabled are skipped.
FinishDecision on_enable(const Schedule& schedule, TaskState state, Time now);

// The user changed the task's definition (seed 003's "manual save"): a
// disabled task is enabled as by on_enable. A changed schedule plans from
// now; the old schedule's slots are not counted as skipped.
FinishDecision on_edit(const Schedule& schedule, TaskState state, Time now, bool schedule_changed);

RunStatus run_status_of(AttemptOutcome outcome);

// Whether a retry of the slot of the task's latest attempt is still to come,
// so that attempt's failure is not final (on_finish's retry_pending): the
// task is not disabled and its next attempt continues the failing streak at
// a retry time, not at a planned slot. That attempt is the retry queued or
// running (`active_retry_slot`, the slot it serves), else next_run_at.
bool retry_pending(const Schedule& schedule, const TaskState& state, std::optional<Time> active_retry_slot);

// A start of the task to come, and the planned slot it is for (none for a
// pending --start-now or retry, which is no planned slot).
struct UpcomingStart {
  Time start;
  std::optional<Time> slot;
};

// Walks the instants at which the scheduler will start the task after
// `from`, in order: its pending next run, then its planned slots, each with
// its jitter. It holds one slot at a time, so a billion starts cost the
// memory of one; the task and schedule must outlive it.
class UpcomingStarts {
 public:
  UpcomingStarts(const Task& task, const Schedule& schedule, Time from);
  // The next start; none when the schedule has no more slots.
  std::optional<UpcomingStart> next();

 private:
  UpcomingStart start_at(Time at, bool planned);

  const Task& task_;
  const Schedule& schedule_;
  std::int64_t run_index_;
  std::optional<Time> pending_;  // the pending next run, until it is given
  SlotCursor slots_;
};

}  // namespace taskd::core
