#include <doctest/doctest.h>

#include <string>

#include "core/backfill.hpp"
#include "test_helpers.hpp"

using namespace taskd::core;
using taskd::test::at;
using namespace std::chrono_literals;

namespace {

Task task_with(ScheduleKind kind, std::string spec, std::string tz = "UTC") {
  Task task;
  task.definition.name = "report";
  task.definition.schedule_kind = kind;
  task.definition.schedule_spec = std::move(spec);
  task.definition.tz = std::move(tz);
  task.definition.retry = {0s, 60s, 300s};
  return task;
}

Schedule schedule_for(const Task& task) { return schedule_of(task.definition).value(); }

std::string message_of(const Result<std::vector<Time>>& planned) {
  REQUIRE_FALSE(planned);
  CHECK(planned.error().kind == ErrorKind::bad_input);
  return planned.error().message;
}

}  // namespace

TEST_CASE("a backfill window includes its first instant and excludes its last") {
  auto task = task_with(ScheduleKind::cron, "0 * * * *");
  auto slots = plan_backfill(task, schedule_for(task), {at(10, 0), at(13, 0)}, at(14, 0));
  REQUIRE(slots);
  CHECK(*slots == std::vector<Time>{at(10, 0), at(11, 0), at(12, 0)});
}

TEST_CASE("backfill slots are the planned slots in the task's zone, without jitter") {
  // 03:30 in Berlin is 02:30 UTC in November (CET, +01:00).
  auto task = task_with(ScheduleKind::cron, "30 3 * * *", "Europe/Berlin");
  task.definition.jitter = 600s;
  auto slots = backfill_slots(schedule_for(task), at(0, 0) - 72h, at(14, 0), 100);
  CHECK(slots == std::vector<Time>{at(2, 30) - 72h, at(2, 30) - 48h, at(2, 30) - 24h, at(2, 30)});
}

TEST_CASE("backfill_slots stops at its limit") {
  auto task = task_with(ScheduleKind::every, "1m");
  task.definition.phase = 0s;
  CHECK(backfill_slots(schedule_for(task), at(10, 0), at(11, 0), 3).size() == 3);
  CHECK(backfill_slots(schedule_for(task), at(10, 0), at(11, 0), 100).size() == 60);
}

TEST_CASE("a window of more slots than --max is refused with their count") {
  auto task = task_with(ScheduleKind::every, "1m");
  task.definition.phase = 0s;
  auto message = message_of(plan_backfill(task, schedule_for(task), {at(0, 0), at(14, 0), 100}, at(14, 0)));
  CHECK(message == "backfill: the window holds 840 slots, more than 100; give --max 840 to queue them all, or "
                   "narrow the window");
  CHECK(plan_backfill(task, schedule_for(task), {at(0, 0), at(14, 0), 840}, at(14, 0))->size() == 840);
}

TEST_CASE("a backfill window must be in order, not empty and not in the future") {
  auto task = task_with(ScheduleKind::cron, "0 * * * *");
  auto schedule = schedule_for(task);
  CHECK(message_of(plan_backfill(task, schedule, {at(12, 0), at(10, 0)}, at(14, 0))) ==
        "backfill: --from 2026-11-21T12:00:00Z is not before --until 2026-11-21T10:00:00Z");
  CHECK(message_of(plan_backfill(task, schedule, {at(12, 0), at(12, 0)}, at(14, 0))).find("is not before") !=
        std::string::npos);
  CHECK(message_of(plan_backfill(task, schedule, {at(12, 0), at(15, 0)}, at(14, 0))) ==
        "backfill: --until 2026-11-21T15:00:00Z is in the future (now: 2026-11-21T14:00:00Z); backfill runs past "
        "slots only");
  CHECK(message_of(plan_backfill(task, schedule, {at(12, 1), at(12, 59)}, at(14, 0))).find("no planned slot") !=
        std::string::npos);
}

TEST_CASE("a manual, fixed-delay or disabled task is not backfilled") {
  auto manual = task_with(ScheduleKind::manual, "", "");
  CHECK(message_of(plan_backfill(manual, schedule_for(manual), {at(10, 0), at(12, 0)}, at(14, 0)))
            .find("it is --manual") != std::string::npos);
  auto fixed_delay = task_with(ScheduleKind::every, "1h", "");
  fixed_delay.definition.after_finish = true;
  CHECK(message_of(plan_backfill(fixed_delay, schedule_for(fixed_delay), {at(10, 0), at(12, 0)}, at(14, 0)))
            .find("--after-finish") != std::string::npos);
  auto disabled = task_with(ScheduleKind::cron, "0 * * * *");
  disabled.state.disabled_until_update = true;
  disabled.state.disabled_reason = "exit code 78";
  CHECK(message_of(plan_backfill(disabled, schedule_for(disabled), {at(10, 0), at(12, 0)}, at(14, 0))) ==
        "backfill: report is disabled (exit code 78); run 'taskd enable report' first");
}

TEST_CASE("a backfilled run is a manual run serving a slot before it was queued") {
  CHECK(is_backfill(Trigger::manual, at(3, 0), at(14, 0), false));
  CHECK_FALSE(is_backfill(Trigger::manual, at(14, 0), at(14, 0), false));  // taskd trigger
  CHECK_FALSE(is_backfill(Trigger::schedule, at(3, 0), at(14, 0), false));  // a late scheduled run
  CHECK_FALSE(is_backfill(Trigger::manual, at(3, 0), at(14, 0), true));     // a chain's retry
  // Backfilled runs and a chain's runs retry by the ladder on their own.
  CHECK(has_own_ladder(Trigger::manual, at(3, 0), at(14, 0), false));
  CHECK(has_own_ladder(Trigger::manual, at(14, 0), at(14, 0), true));
  CHECK_FALSE(has_own_ladder(Trigger::manual, at(14, 0), at(14, 0), false));
  CHECK_FALSE(has_own_ladder(Trigger::schedule, at(3, 0), at(14, 0), false));
}

TEST_CASE("a backfilled run leaves the schedule's attempt count and next run alone") {
  auto task = task_with(ScheduleKind::cron, "0 * * * *");
  auto schedule = schedule_for(task);
  TaskState failing;
  failing.attempt_no = 2;
  failing.next_run_at = at(14, 5);  // a pending retry of the schedule
  auto started = on_backfill_start(task.definition, schedule, failing, at(14, 1), "uid-1");
  CHECK(started.state.attempt_no == 2);
  CHECK(started.state.attempt_uid == "uid-1");
  CHECK(started.state.run_index == 1);
  CHECK(started.state.next_run_at == at(14, 5));
  auto succeeded = on_backfill_finish(schedule, started.state, at(14, 2), AttemptOutcome::succeeded, "");
  CHECK(succeeded.state.attempt_no == 2);
  CHECK(succeeded.state.next_run_at == at(14, 5));
  CHECK(succeeded.state.attempt_uid.empty());
  CHECK(succeeded.state.last_status == RunStatus::succeeded);
  auto failed = on_backfill_finish(schedule, started.state, at(14, 2), AttemptOutcome::failed, "exit code 1");
  CHECK(failed.state.attempt_no == 2);
  CHECK(failed.state.next_run_at == at(14, 5));
  CHECK_FALSE(failed.state.disabled_until_update);
}

TEST_CASE("a permanent failure of a backfilled run disables the task") {
  auto task = task_with(ScheduleKind::cron, "0 * * * *");
  auto schedule = schedule_for(task);
  auto started = on_backfill_start(task.definition, schedule, TaskState{}, at(14, 1), "uid-1");
  auto ended = on_backfill_finish(schedule, started.state, at(14, 2), AttemptOutcome::permanent_failure, "bad config");
  CHECK(ended.state.disabled_until_update);
  CHECK(ended.state.disabled_reason == "bad config");
}

TEST_CASE("a failed backfilled slot is retried by the task's ladder until it ends") {
  auto task = task_with(ScheduleKind::cron, "0 * * * *");
  CHECK(backfill_retry_at(task.definition, 1, AttemptOutcome::failed, at(14, 0)) == at(14, 0));
  CHECK(backfill_retry_at(task.definition, 2, AttemptOutcome::timed_out, at(14, 0)) == at(14, 1));
  CHECK(backfill_retry_at(task.definition, 3, AttemptOutcome::lost, at(14, 0)) == at(14, 5));
  CHECK_FALSE(backfill_retry_at(task.definition, 4, AttemptOutcome::failed, at(14, 0)));
  CHECK_FALSE(backfill_retry_at(task.definition, 1, AttemptOutcome::succeeded, at(14, 0)));
  CHECK_FALSE(backfill_retry_at(task.definition, 1, AttemptOutcome::permanent_failure, at(14, 0)));
}
