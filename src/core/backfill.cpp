#include "core/backfill.hpp"

#include <fmt/format.h>

namespace taskd::core {

using namespace std::chrono_literals;

std::vector<Time> backfill_slots(const Schedule& schedule, Time from, Time until, std::size_t limit) {
  std::vector<Time> slots;
  SlotCursor cursor(schedule, from - 1ms);
  while (slots.size() < limit) {
    auto slot = cursor.next();
    if (!slot || *slot >= until) break;
    slots.push_back(*slot);
  }
  return slots;
}

namespace {

Result<void> check_window(const BackfillWindow& window, Time now) {
  if (window.from >= window.until)
    return fail(ErrorKind::bad_input, fmt::format("backfill: --from {} is not before --until {}",
                                                  format_rfc3339(window.from), format_rfc3339(window.until)));
  if (window.until > now)
    return fail(ErrorKind::bad_input,
                fmt::format("backfill: --until {} is in the future (now: {}); backfill runs past slots only",
                            format_rfc3339(window.until), format_rfc3339(now)));
  return {};
}

// Why a task without a grid of slots has none, in its options' words.
std::string_view without_slots_why(const TaskDefinition& definition) {
  if (definition.schedule_kind == ScheduleKind::manual) return "it is --manual";
  return "it runs --after-finish: each run follows the previous one's end";
}

Result<void> check_task(const Task& task, const Schedule& schedule) {
  const auto& name = task.definition.name;
  if (!has_slot_grid(schedule))
    return fail(ErrorKind::bad_input, fmt::format("backfill: {} has no planned slots ({}): nothing to backfill; "
                                                  "'taskd trigger {}' runs it once",
                                                  name, without_slots_why(task.definition), name));
  if (task.state.disabled_until_update)
    return fail(ErrorKind::bad_input, fmt::format("backfill: {} is disabled ({}); run 'taskd enable {}' first", name,
                                                  task.state.disabled_reason, name));
  return {};
}

std::string too_many_slots(const Schedule& schedule, const BackfillWindow& window) {
  auto span = slots_between(schedule, window.from - 1ms, window.until - 1ms);
  return fmt::format("backfill: the window holds {}{} slots, more than {}; give --max {} to queue them all, or "
                     "narrow the window",
                     span.count_is_lower_bound ? "at least " : "", span.count, window.max_slots, span.count);
}

}  // namespace

Result<std::vector<Time>> plan_backfill(const Task& task, const Schedule& schedule, const BackfillWindow& window,
                                        Time now) {
  TRY(check_window(window, now));
  TRY(check_task(task, schedule));
  auto slots = backfill_slots(schedule, window.from, window.until, window.max_slots + 1);
  if (slots.empty())
    return fail(ErrorKind::bad_input,
                fmt::format("backfill: {} has no planned slot from {} until {} (the window includes --from, not "
                            "--until)",
                            task.definition.name, format_rfc3339(window.from), format_rfc3339(window.until)));
  if (slots.size() > window.max_slots) return fail(ErrorKind::bad_input, too_many_slots(schedule, window));
  return slots;
}

bool is_backfill(Trigger trigger, Time scheduled_at, Time enqueued_at, bool queued_by_upstream) {
  return trigger == Trigger::manual && scheduled_at < enqueued_at && !queued_by_upstream;
}

bool has_own_ladder(Trigger trigger, Time scheduled_at, Time enqueued_at, bool queued_by_upstream) {
  return trigger == Trigger::manual && (scheduled_at < enqueued_at || queued_by_upstream);
}

StartDecision on_backfill_start(const TaskDefinition& definition, const Schedule& schedule, TaskState state, Time now,
                                std::string attempt_uid) {
  int schedule_attempts = state.attempt_no;
  auto decision = on_manual_start(definition, schedule, std::move(state), now, std::move(attempt_uid));
  decision.state.attempt_no = schedule_attempts;
  return decision;
}

FinishDecision on_backfill_finish(const Schedule& schedule, TaskState state, Time now, AttemptOutcome outcome,
                                  const std::string& reason) {
  // A manual finish takes back the attempt its start counted, and its
  // success ends a failing streak: neither applies here.
  TaskState before = state;
  auto decision = on_manual_finish(schedule, std::move(state), now, outcome, reason);
  decision.state.attempt_no = before.attempt_no;
  if (outcome != AttemptOutcome::permanent_failure) decision.state.next_run_at = before.next_run_at;
  return decision;
}

std::optional<Time> backfill_retry_at(const TaskDefinition& definition, int attempt_no, AttemptOutcome outcome,
                                      Time now) {
  bool retryable = outcome == AttemptOutcome::failed || outcome == AttemptOutcome::timed_out ||
                   outcome == AttemptOutcome::lost;
  const auto& ladder = definition.retry;
  if (!retryable || attempt_no < 1 || attempt_no > static_cast<int>(ladder.size())) return std::nullopt;
  return now + ladder[static_cast<std::size_t>(attempt_no - 1)];
}

}  // namespace taskd::core
