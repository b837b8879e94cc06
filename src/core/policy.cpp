#include "core/policy.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <utility>

#include "core/duration.hpp"
#include "core/hash.hpp"
#include "core/recent_cache.hpp"

namespace taskd::core {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view skipped_marker = " skipped: ";

// The reason of a SKIPPED row names its slots (last_skipped_slot reads them back).
SkippedSlots skipped_slots(const SlotSpan& span, std::string_view why) {
  auto first = format_rfc3339(span.first);
  auto reason = span.count == 1 ? fmt::format("slot {}{}{}", first, skipped_marker, why)
                                : fmt::format("{}{} slots from {} to {}{}{}", span.count_is_lower_bound ? "at least " : "",
                                              span.count, first, format_rfc3339(span.last), skipped_marker, why);
  return SkippedSlots{span.count, span.first, span.last, std::move(reason)};
}

// Grid slots in (accounted_until, until] that will not run get one SKIPPED row.
std::optional<SkippedSlots> account_due_slots(const Schedule& schedule, TaskState& state, Time until,
                                              std::string_view why) {
  if (!has_slot_grid(schedule) || !state.accounted_until) return std::nullopt;
  auto span = slots_between(schedule, *state.accounted_until, until);
  if (span.count <= 0) return std::nullopt;
  state.accounted_until = span.last;
  return skipped_slots(span, why);
}

// One slot, skipped for `why`.
SkippedSlots skipped_slot(Time slot, std::string_view why) { return skipped_slots(SlotSpan{1, false, slot, slot}, why); }

// Slots up to accounted_until have their rows already. Another process may
// have accounted slots after this decision's `now` (read before it waited
// for the write lock): the plan continues from the later of the two, so no
// slot gets a second row.
Time planning_point(const TaskState& state, Time t) {
  return state.accounted_until ? std::max(t, *state.accounted_until) : t;
}

Time next_planned_after(const Schedule& schedule, Time t, const std::optional<Time>& fallback) {
  auto next = next_slot_after(schedule, t);
  return next ? *next : fallback.value_or(t);
}

std::string disabled_reason(const TaskDefinition& definition, int attempts, const std::string& last_reason) {
  return fmt::format("Cannot run {} after {} attempt(s): {}", definition.name, attempts, last_reason);
}

// Seed 003: a retry that would start at or after the next planned slot, or
// run past it, is replaced by that slot, so the plan keeps its timing.
Time retry_time(const TaskDefinition& definition, const Schedule& schedule, const TaskState& state, Time now,
                Seconds delay) {
  Time retry_at = now + delay;
  auto planned = next_slot_after(schedule, planning_point(state, now));
  if (!planned) return retry_at;
  // Without a timebox, only a retry that would start at or after the slot.
  Time retry_deadline = retry_at + effective_timeout(definition, schedule, retry_at).value_or(Seconds{0});
  return (retry_at >= *planned || retry_deadline > *planned) ? *planned : retry_at;
}

// The end of the timebox of a run that starts at `start`; without one, a
// time no run reaches, so that leases and waits need no case of their own.
Time run_deadline(std::optional<Seconds> timebox, Time start) {
  return start + timebox.value_or(longest_duration);
}

// After a success: the first planned slot after now (fixed delay: now + DUR).
std::optional<Time> next_after_success(const Schedule& schedule, Time now) {
  if (is_fixed_delay(schedule)) return now + std::get<Every>(schedule).interval;
  return next_slot_after(schedule, now);
}

void clear_attempt(TaskState& state) {
  state.attempt_uid.clear();
  state.attempt_started_at.reset();
  state.attempt_timeout_at.reset();
}

// A success ends the failing streak; the first failure after one starts it.
void end_attempt(TaskState& state, Time now, AttemptOutcome outcome) {
  state.last_finished_at = now;
  state.last_status = run_status_of(outcome);
  if (outcome == AttemptOutcome::succeeded) {
    state.last_succeeded_at = now;
    state.failing_since.reset();
    state.ladder_exhausted_at.reset();
  } else if (!state.failing_since) {
    state.failing_since = now;
  }
  clear_attempt(state);
}

// --catch-up all: every missed slot runs, one after another.
bool runs_every_missed_slot(const TaskDefinition& definition, const Schedule& schedule) {
  return definition.catch_up.kind == CatchUp::Kind::all && has_slot_grid(schedule);
}

// Missed slots before this are skipped: --catch-up-window, which for
// --catch-up none is a minute unless given (a scheduler's own lag is no miss).
std::optional<Time> catch_up_horizon(const TaskDefinition& definition, Time now) {
  if (definition.catch_up_window) return now - *definition.catch_up_window;
  if (definition.catch_up.kind == CatchUp::Kind::none) return now - 1min;
  return std::nullopt;
}

std::string window_reason(const TaskDefinition& definition) {
  return definition.catch_up_window
             ? fmt::format("missed by more than the catch-up window of {}", format_duration(*definition.catch_up_window))
             : std::string("missed, and --catch-up none runs no missed slot");
}

// A planned slot after the last accounted one has come by `now`.
bool has_unaccounted_slot(const Schedule& schedule, const TaskState& state, Time now) {
  if (!state.accounted_until) return false;
  auto next = next_slot_after(schedule, *state.accounted_until);
  return next && *next <= now;
}

// After a success, or a failure with no rung of the ladder left: the next
// planned slot, the attempt count starting over there.
void plan_next_slot(const TaskDefinition& definition, const Schedule& schedule, TaskState& state, Time now) {
  state.attempt_no = 0;
  state.next_run_at = next_after_success(schedule, planning_point(state, now));
  // --catch-up all: the next missed slot, at once.
  if (runs_every_missed_slot(definition, schedule) && has_unaccounted_slot(schedule, state, now))
    state.next_run_at = now;
}

// --catch-up all: the missed slots older than the window, and the oldest of
// more than all:N, get one SKIPPED row.
std::optional<SkippedSlots> skip_beyond_catch_up(const TaskDefinition& definition, const Schedule& schedule,
                                                 TaskState& state, Time now) {
  std::optional<Time> skip_until;
  std::string why;
  if (auto horizon = catch_up_horizon(definition, now)) {
    skip_until = *horizon - 1ms;
    why = window_reason(definition);
  }
  auto most = definition.catch_up.most;
  Time kept_from = std::max(*state.accounted_until, skip_until.value_or(Time{}));
  auto missed = slots_between(schedule, kept_from, now);
  if (most && missed.count > *most) {
    SlotCursor cursor(schedule, kept_from);
    for (auto beyond = missed.count - *most; beyond > 0; --beyond) skip_until = cursor.next();
    why = fmt::format("more than {} missed slots (--catch-up all:{})", *most, *most);
  }
  if (!skip_until) return std::nullopt;
  return account_due_slots(schedule, state, *skip_until, why);
}

void disable_now(TaskState& state, std::string reason) {
  state.disabled_until_update = true;
  state.disabled_reason = std::move(reason);
  state.next_run_at.reset();
}

}  // namespace

std::optional<Seconds> effective_timeout(const TaskDefinition& definition, const Schedule& schedule, Time slot) {
  return effective_timeout(definition, definition.timeout ? std::nullopt : interval_around(schedule, slot));
}

std::optional<Seconds> effective_timeout(const TaskDefinition& definition, std::optional<Seconds> interval) {
  if (definition.timeout == Seconds{0}) return std::nullopt;
  if (definition.timeout) return *definition.timeout;
  if (!interval) return 1h;
  return std::max(Seconds{1}, *interval / 2);
}

std::optional<Seconds> interval_at_epoch(const TaskDefinition& definition, const Schedule& schedule) {
  auto key = schedule_key(definition);
  if (!key) return interval_around(schedule, Time{});
  constexpr std::size_t kept_schedules = 64;
  static RecentCache<std::string, std::optional<Seconds>> cache(kept_schedules);
  return cache.value_of(std::move(*key), [&] { return interval_around(schedule, Time{}); });
}

Millis jitter_delay(const TaskDefinition& definition, std::int64_t run_index) {
  auto range = definition.jitter.count();
  if (range <= 0) return Millis{0};
  auto salt = 0x6a6974746572ULL /* "jitter" */ + static_cast<std::uint64_t>(run_index);
  return Seconds{static_cast<std::int64_t>(stable_hash(definition.name, salt) % static_cast<std::uint64_t>(range))};
}

Millis effective_tolerance(const TaskDefinition& definition, Seconds interval) {
  if (definition.tolerance) return *definition.tolerance;
  return std::chrono::duration_cast<Millis>(interval) / 10;
}

TaskState on_create(const Schedule& schedule, Time now, bool start_now) {
  TaskState state;
  state.accounted_until = now;
  state.next_run_at = start_now ? std::optional<Time>(now) : next_slot_after(schedule, now);
  return state;
}

namespace {

// --catch-up all: the missed slots run oldest first, each when the run before
// it has ended (on_finish plans the next); those beyond the window or the
// most are skipped. A retry runs first, and a run of the task another way
// (trigger) is waited for.
EnqueueDecision enqueue_missed_slots(const TaskDefinition& definition, const Schedule& schedule, TaskState state,
                                     Time now, bool run_active) {
  EnqueueDecision decision;
  decision.trigger = state.attempt_no > 0 ? Trigger::retry : Trigger::schedule;
  if (run_active) {
    // Looked at again when that attempt's timebox is over, or in a minute.
    state.next_run_at = std::max(now + 1min, state.attempt_timeout_at.value_or(now));
    decision.state = std::move(state);
    return decision;
  }
  if (decision.trigger == Trigger::retry) {
    decision.run_slot = decision.not_before = state.next_run_at.value_or(now);
    state.next_run_at.reset();
    decision.state = std::move(state);
    return decision;
  }
  decision.skipped = skip_beyond_catch_up(definition, schedule, state, now);
  if (!has_unaccounted_slot(schedule, state, now)) {  // all were beyond the window
    state.next_run_at = next_slot_after(schedule, *state.accounted_until);
    decision.state = std::move(state);
    return decision;
  }
  auto slot = next_slot_after(schedule, *state.accounted_until);
  decision.run_slot = *slot;
  decision.not_before = *slot + jitter_delay(definition, state.run_index + 1);
  state.accounted_until = *slot;
  if (has_unaccounted_slot(schedule, state, now)) {
    state.next_run_at.reset();
  } else {
    state.next_run_at = next_slot_after(schedule, *slot);
  }
  decision.state = std::move(state);
  return decision;
}

}  // namespace

EnqueueDecision on_enqueue(const TaskDefinition& definition, const Schedule& schedule, TaskState state, Time now,
                           bool run_active, Missed missed) {
  if (runs_every_missed_slot(definition, schedule) && state.accounted_until &&
      (run_active || state.attempt_no > 0 || has_unaccounted_slot(schedule, state, now))) {
    return enqueue_missed_slots(definition, schedule, std::move(state), now, run_active);
  }
  EnqueueDecision decision;
  Time due = state.next_run_at.value_or(now);
  decision.trigger = state.attempt_no > 0 ? Trigger::retry : Trigger::schedule;
  bool skip = run_active && definition.overlap == Overlap::skip;
  Time slot = due;
  if (has_slot_grid(schedule) && state.accounted_until) {
    auto latest = slots_between(schedule, *state.accounted_until, now);
    if (latest.count > 0 && latest.last > due) slot = latest.last;
    auto horizon = catch_up_horizon(definition, now);
    if (!skip && horizon && slot < *horizon && is_planned_slot(schedule, slot)) {
      decision.skipped = account_due_slots(schedule, state, now, window_reason(definition));
      state.next_run_at = next_slot_after(schedule, planning_point(state, now));
      decision.state = std::move(state);
      return decision;
    }
    // Every due slot but the one served is missed: the machine was off or no
    // scheduler ran (anacron, systemd Persistent=true: run once, not N times),
    // or the scheduler ticks less often than the task comes due.
    if (!skip) {
      TaskState before_latest = state;
      decision.skipped = account_due_slots(
          schedule, before_latest, slot - 1ms,
          missed == Missed::between_ticks ? "missed between two ticks (the scheduler ticks less often than the task)"
                                          : "missed while no scheduler ran");
    }
  }
  if (skip) {
    decision.skipped = account_due_slots(schedule, state, now, "a run of this task was still queued or running");
    if (!decision.skipped)
      decision.skipped = skipped_slot(slot, "a run of this task was still queued or running");
  } else {
    decision.run_slot = slot;
    // Only planned slots are jittered: a retry or --start-now means "now".
    bool planned = decision.trigger == Trigger::schedule && is_planned_slot(schedule, slot);
    decision.not_before = slot + (planned ? jitter_delay(definition, state.run_index + 1) : Millis{0});
    if (has_slot_grid(schedule)) state.accounted_until = std::max(state.accounted_until.value_or(slot), slot);
  }
  if (is_fixed_delay(schedule)) {
    // The next start is set when this run starts and finishes; until then the
    // task is not due again.
    state.next_run_at = std::nullopt;
  } else {
    state.next_run_at = next_slot_after(schedule, planning_point(state, now));
  }
  decision.state = std::move(state);
  return decision;
}

std::optional<std::string> drop_reason(const TaskDefinition& definition, const Schedule& schedule,
                                       const TaskState& state, Trigger trigger, Time now) {
  // Retries and manual runs come sooner than the plan on purpose, and so do
  // the missed slots of --catch-up all.
  if (trigger != Trigger::schedule || !state.last_run_at || runs_every_missed_slot(definition, schedule))
    return std::nullopt;
  auto interval = interval_around(schedule, now);
  if (!interval) return std::nullopt;
  auto tolerance = effective_tolerance(definition, *interval);
  // Jittered starts of consecutive runs may come closer than the interval.
  Time earliest = *state.last_run_at + *interval - tolerance - definition.jitter;
  if (now >= earliest) return std::nullopt;
  return fmt::format("dropped: started {} ago, sooner than interval {} - tolerance {} (last run {})",
                     format_duration_ms(now - *state.last_run_at), format_duration(*interval),
                     format_duration_ms(tolerance), format_rfc3339(*state.last_run_at, Precision::milliseconds));
}

StartDecision on_start(const TaskDefinition& definition, const Schedule& schedule, TaskState state, Time slot,
                       Time now, std::string attempt_uid) {
  StartDecision decision;
  if (!runs_every_missed_slot(definition, schedule))
    decision.skipped = account_due_slots(schedule, state, now, "came due before the previous run started");
  auto timebox = effective_timeout(definition, schedule, slot);
  Time deadline = run_deadline(timebox, now);
  state.last_run_at = now;
  state.attempt_no += 1;
  state.attempt_uid = std::move(attempt_uid);
  state.attempt_started_at = now;
  state.attempt_timeout_at = deadline;
  state.run_index += 1;
  if (is_fixed_delay(schedule)) {
    // A safety net the finish overwrites, so a crashed worker never strands it.
    state.next_run_at = deadline + std::get<Every>(schedule).interval;
  } else if (definition.overlap != Overlap::replace) {
    // With replace the next slot comes anyway, to take this attempt's place.
    // Without a timebox, the slots that come while it runs are met (and
    // skipped, or queued) as they come.
    Time planned_from = timebox ? deadline : now;
    state.next_run_at = next_planned_after(schedule, planning_point(state, planned_from), state.next_run_at);
  }
  decision.deadline = deadline;
  decision.state = std::move(state);
  return decision;
}

FinishDecision on_finish(const TaskDefinition& definition, const Schedule& schedule, TaskState state, Time now,
                         AttemptOutcome outcome, const std::string& reason) {
  FinishDecision decision;
  if (!runs_every_missed_slot(definition, schedule))
    decision.skipped = account_due_slots(schedule, state, now, "came due while the previous run was running");
  end_attempt(state, now, outcome);
  if (outcome == AttemptOutcome::succeeded) {
    plan_next_slot(definition, schedule, state, now);
  } else if (outcome == AttemptOutcome::permanent_failure) {
    disable_now(state, reason);
  } else {
    const auto& ladder = definition.retry;
    // A row another client wrote may count no attempt: this one is the first.
    state.attempt_no = std::max(state.attempt_no, 1);
    if (state.attempt_no > static_cast<int>(ladder.size()) && definition.disable_when_exhausted) {
      disable_now(state, disabled_reason(definition, state.attempt_no, reason));
    } else if (state.attempt_no > static_cast<int>(ladder.size())) {
      // A failing task keeps its plan, as cron's jobs do.
      if (!state.ladder_exhausted_at) state.ladder_exhausted_at = now;
      plan_next_slot(definition, schedule, state, now);
    } else if (is_fixed_delay(schedule)) {
      state.next_run_at = now + ladder[state.attempt_no - 1];
      decision.retry_pending = true;
    } else {
      state.next_run_at = retry_time(definition, schedule, state, now, ladder[state.attempt_no - 1]);
      decision.retry_pending = !is_planned_slot(schedule, *state.next_run_at);
    }
  }
  decision.state = std::move(state);
  return decision;
}

StartDecision on_manual_start(const TaskDefinition& definition, const Schedule& schedule, TaskState state, Time now,
                              std::string attempt_uid) {
  StartDecision decision;
  decision.deadline = run_deadline(effective_timeout(definition, schedule, now), now);
  state.attempt_no += 1;
  state.attempt_uid = std::move(attempt_uid);
  state.attempt_started_at = now;
  state.attempt_timeout_at = decision.deadline;
  state.run_index += 1;
  decision.state = std::move(state);
  return decision;
}

FinishDecision on_manual_finish(const Schedule& schedule, TaskState state, Time now, AttemptOutcome outcome,
                                const std::string& reason) {
  FinishDecision decision;
  bool failing_streak = state.attempt_no > 1;
  end_attempt(state, now, outcome);
  state.attempt_no -= 1;
  if (outcome == AttemptOutcome::succeeded) {
    state.attempt_no = 0;
    if (failing_streak) state.next_run_at = next_after_success(schedule, planning_point(state, now));
  } else if (outcome == AttemptOutcome::permanent_failure) {
    disable_now(state, reason);
  }
  decision.state = std::move(state);
  return decision;
}

TaskState on_replace(TaskState state) {
  clear_attempt(state);
  state.attempt_no = std::max(0, state.attempt_no - 1);
  return state;
}

TaskState on_shutdown_end(TaskState state, const TaskState& before_start) {
  clear_attempt(state);
  state.attempt_no = before_start.attempt_no;
  state.run_index = before_start.run_index;
  state.last_run_at = before_start.last_run_at;
  return state;
}

FinishDecision on_resume(const Schedule& schedule, TaskState state, Time now) {
  FinishDecision decision;
  decision.skipped = account_due_slots(schedule, state, now, "the task was paused");
  state.paused = false;
  // A planned slot that passed is skipped; a pending start (--start-now, a
  // retry) still runs at the next tick.
  bool passed_slot = state.next_run_at && *state.next_run_at <= now &&
                     is_planned_slot(schedule, *state.next_run_at);
  if (has_slot_grid(schedule) && passed_slot) state.next_run_at = next_slot_after(schedule, now);
  decision.state = std::move(state);
  return decision;
}

namespace {

// The pending next run of `task` if it comes after `from`.
std::optional<Time> pending_after(const Task& task, Time from) {
  const auto& pending = task.state.next_run_at;
  return pending && *pending > from ? pending : std::nullopt;
}

}  // namespace

UpcomingStarts::UpcomingStarts(const Task& task, const Schedule& schedule, Time from)
    : task_(task),
      schedule_(schedule),
      run_index_(task.state.run_index),
      pending_(pending_after(task, from)),
      slots_(schedule, pending_.value_or(from)) {}

std::optional<UpcomingStart> UpcomingStarts::next() {
  if (pending_) {
    auto at = *std::exchange(pending_, std::nullopt);
    return start_at(at, is_planned_slot(schedule_, at));
  }
  auto slot = slots_.next();
  if (!slot) return std::nullopt;
  return start_at(*slot, true);
}

// A pending --start-now or retry is not a planned slot: it is not jittered.
UpcomingStart UpcomingStarts::start_at(Time at, bool planned) {
  if (!planned) return {at, std::nullopt};
  return {at + jitter_delay(task_.definition, ++run_index_), at};
}

FinishDecision on_enable(const Schedule& schedule, TaskState state, Time now) {
  FinishDecision decision;
  decision.skipped = account_due_slots(schedule, state, now, "the task was disabled");
  state.disabled_until_update = false;
  state.disabled_reason.clear();
  state.attempt_no = 0;
  state.next_run_at = is_fixed_delay(schedule) ? std::optional<Time>(now) : next_slot_after(schedule, now);
  decision.state = std::move(state);
  return decision;
}

FinishDecision on_edit(const Schedule& schedule, TaskState state, Time now, bool schedule_changed) {
  if (schedule_changed) {
    state.accounted_until = now;
    if (!is_fixed_delay(schedule)) {
      state.next_run_at = next_slot_after(schedule, now);  // an ended COUNT/UNTIL may go on
    } else if (state.next_run_at) {
      // Without next_run_at a fixed-delay task has a run in flight, whose end plans the next.
      state.next_run_at = now + std::get<Every>(schedule).interval;
    }
  }
  if (state.disabled_until_update) return on_enable(schedule, std::move(state), now);
  return FinishDecision{std::move(state), std::nullopt};
}

RunStatus run_status_of(AttemptOutcome outcome) {
  switch (outcome) {
    case AttemptOutcome::succeeded: return RunStatus::succeeded;
    case AttemptOutcome::failed:
    case AttemptOutcome::permanent_failure: return RunStatus::failed;
    case AttemptOutcome::timed_out: return RunStatus::timed_out;
    case AttemptOutcome::lost: return RunStatus::lost;
  }
  return RunStatus::failed;
}

bool retry_pending(const Schedule& schedule, const TaskState& state, std::optional<Time> active_retry_slot) {
  if (state.disabled_until_update || state.attempt_no == 0 || !is_failure(state.last_status)) return false;
  if (is_fixed_delay(schedule)) return true;  // on_finish retries each failure the ladder allows
  auto next = active_retry_slot ? active_retry_slot : state.next_run_at;
  return next && !is_planned_slot(schedule, *next);
}

std::optional<Time> last_skipped_slot(std::string_view reason) {
  auto end = reason.find(skipped_marker);
  if (end == std::string_view::npos) return std::nullopt;
  auto slots = reason.substr(0, end);
  auto last = slots.rfind(' ');
  auto parsed = parse_rfc3339(slots.substr(last + 1));
  if (!parsed) return std::nullopt;
  return *parsed;
}

namespace {

// A day's [begin, end) as the bounds of slots_between: (begin - 1 ms, end - 1 ms].
std::pair<Time, Time> slot_bounds(std::pair<Time, Time> day, Time after, Time until) {
  return {std::max(after, day.first - 1ms), std::min(until, day.second - 1ms)};
}

}  // namespace

Result<CalendarSkips> calendar_skips(const TaskDefinition& definition, std::optional<Time> after,
                                     std::optional<Time> until) {
  CalendarSkips skips;
  const auto& skipped = definition.calendar_days.skipped;
  if (skipped.empty() || !after || !until || *until <= *after) return skips;
  auto zone = TRY(set_dates_zone(definition));
  auto day_of = [&](Time t) { return std::chrono::floor<date::days>(to_local(zone, t)); };
  auto days = std::ranges::subrange(std::ranges::lower_bound(skipped, day_of(*after)),
                                    std::ranges::upper_bound(skipped, day_of(*until)));
  if (days.empty()) return skips;
  auto own = TRY(schedule_without_skipped_days(definition));
  std::optional<Time> more_until;
  for (auto day : days) {
    auto [from, to] = slot_bounds(day_span(zone, day), *after, *until);
    if (skips.days.size() < max_skipped_day_rows) {
      auto slots = slots_between(own, from, to);
      if (slots.count > 0) skips.days.push_back({day, slots});
      continue;
    }
    // Beyond the bound a day costs one search, however many slots it has.
    auto next = next_slot_after(own, from);
    if (!next || *next > to) continue;
    if (skips.more_days++ == 0) skips.more_first = *next;
    more_until = to;
  }
  if (more_until) skips.more_last = last_slot_at_or_before(own, *more_until).value_or(skips.more_first);
  return skips;
}

CalendarSkippedDays::CalendarSkippedDays(Schedule own, Zone zone, const std::vector<date::local_days>& days,
                                         Time from)
    : own_(std::move(own)),
      zone_(zone),
      days_(std::ranges::lower_bound(days, std::chrono::floor<date::days>(to_local(zone, from))), days.end()),
      from_(from) {}

std::optional<CalendarSkippedDay> CalendarSkippedDays::next() {
  for (; !days_.empty(); days_ = days_.subspan(1)) {
    auto [begin, end] = day_span(zone_, days_.front());
    auto first = next_slot_after(own_, std::max(from_, begin - 1ms));
    if (!first || *first >= end) continue;
    CalendarSkippedDay day{days_.front(), *first, last_slot_at_or_before(own_, end - 1ms).value_or(*first)};
    days_ = days_.subspan(1);
    return day;
  }
  return std::nullopt;
}

Result<CalendarSkippedDays> calendar_skipped_days(const TaskDefinition& definition, Time from) {
  auto zone = TRY(set_dates_zone(definition));
  return CalendarSkippedDays(TRY(schedule_without_skipped_days(definition)), zone, definition.calendar_days.skipped,
                             from);
}

SkippedSlots skipped_day(const SkippedDay& day, std::string_view why) { return skipped_slots(day.slots, why); }

SkippedSlots skipped_more_days(const CalendarSkips& skips, std::string_view why) {
  auto reason = fmt::format("slots on {} more days from {} to {}{}{}", skips.more_days,
                            format_rfc3339(skips.more_first), format_rfc3339(skips.more_last), skipped_marker, why);
  return SkippedSlots{skips.more_days, skips.more_first, skips.more_last, std::move(reason)};
}

}  // namespace taskd::core
