#include <doctest/doctest.h>

#include <set>

#include "core/calendar.hpp"
#include "core/policy.hpp"
#include "test_helpers.hpp"

using namespace taskd::core;
using taskd::test::at;
using namespace std::chrono_literals;

namespace {

TaskDefinition every(Seconds interval, Seconds phase) {
  TaskDefinition d;
  d.name = "fetch";
  d.schedule_kind = ScheduleKind::every;
  d.schedule_spec = format_duration(interval);
  d.phase = phase;
  d.retry = default_retry_ladder();
  return d;
}

Schedule schedule_for(const TaskDefinition& d) { return schedule_of(d).value(); }

}  // namespace

TEST_CASE("a new task waits for its first slot, or starts now when asked") {
  auto d = every(60s, 15s);
  CHECK(on_create(schedule_for(d), at(14, 0), false).next_run_at == at(14, 0, 15));
  CHECK(on_create(schedule_for(d), at(14, 0), true).next_run_at == at(14, 0));
}

TEST_CASE("the tick queues the due slot and moves next_run_at to the following slot") {
  auto d = every(60s, 0s);
  auto state = on_create(schedule_for(d), at(13, 59, 30), false);
  auto decision = on_enqueue(d, schedule_for(d), state, at(14, 0, 0, 200), false);
  CHECK(decision.run_slot == at(14, 0));
  CHECK(decision.trigger == Trigger::schedule);
  CHECK_FALSE(decision.skipped);
  CHECK(decision.state.next_run_at == at(14, 1));
}

TEST_CASE("missed slots run once and are recorded as one SKIPPED row with their count") {
  auto d = every(60s, 0s);
  auto state = on_create(schedule_for(d), at(9, 59, 30), false);  // next slot 10:00
  auto decision = on_enqueue(d, schedule_for(d), state, at(10, 5, 30), false);
  CHECK(decision.run_slot == at(10, 5));
  REQUIRE(decision.skipped);
  CHECK(decision.skipped->count == 5);
  CHECK(decision.skipped->first == at(10, 0));
  CHECK(decision.skipped->last == at(10, 4));
  CHECK(decision.skipped->reason.find("5 slots") != std::string::npos);
  CHECK(decision.state.next_run_at == at(10, 6));
}

TEST_CASE("overlap=skip records the slot as SKIPPED while a run is queued or running") {
  auto d = every(60s, 0s);
  auto state = on_create(schedule_for(d), at(9, 59, 30), false);
  auto decision = on_enqueue(d, schedule_for(d), state, at(10, 0, 1), true);
  CHECK_FALSE(decision.run_slot);
  REQUIRE(decision.skipped);
  CHECK(decision.skipped->count == 1);
  CHECK(decision.skipped->first == at(10, 0));
  CHECK(decision.state.next_run_at == at(10, 1));
}

TEST_CASE("overlap=queue queues anyway (nuntium)") {
  auto d = every(60s, 0s);
  d.overlap = Overlap::queue;
  auto state = on_create(schedule_for(d), at(9, 59, 30), false);
  CHECK(on_enqueue(d, schedule_for(d), state, at(10, 0, 1), true).run_slot == at(10, 0));
}

TEST_CASE("at start: new attempt, timebox of half the interval, next slot after the timebox") {
  auto d = every(60s, 0s);
  TaskState state;
  state.next_run_at = at(10, 1);
  state.accounted_until = at(10, 0);
  auto start = on_start(d, schedule_for(d), state, at(10, 0, 5), at(10, 0, 5), "uid-1");
  CHECK(start.state.attempt_no == 1);
  CHECK(start.state.run_index == 1);
  CHECK(start.state.attempt_uid == "uid-1");
  CHECK(start.state.last_run_at == at(10, 0, 5));
  CHECK(start.deadline == at(10, 0, 35));
  CHECK(start.state.attempt_timeout_at == at(10, 0, 35));
  CHECK(start.state.next_run_at == at(10, 1));
}

TEST_CASE("success resets the attempt count and plans the first slot after now") {
  auto d = every(30min, 0s);
  d.timeout = 1h;
  TaskState state;
  state.attempt_no = 2;
  state.accounted_until = at(10, 0);
  auto start = on_start(d, schedule_for(d), state, at(10, 0), at(10, 0), "uid");
  // Seed 003: at start the next refresh accounts for the timeout...
  CHECK(start.state.next_run_at == at(11, 30));
  // ...and a success after 10 minutes brings it back to the nearest slot.
  auto done = on_finish(d, schedule_for(d), start.state, at(10, 10), AttemptOutcome::succeeded, "");
  CHECK(done.state.attempt_no == 0);
  CHECK(done.state.next_run_at == at(10, 30));
  CHECK(done.state.attempt_uid.empty());
  CHECK(done.state.last_status == RunStatus::succeeded);
  CHECK(done.state.last_finished_at == at(10, 10));
}

TEST_CASE("a success records when it ended, for taskd check; a failure keeps the last success") {
  auto d = every(30min, 0s);
  TaskState state;
  state.attempt_no = 1;  // the attempt that ends
  state.last_succeeded_at = at(9, 0);
  auto failed = on_finish(d, schedule_for(d), state, at(10, 0), AttemptOutcome::failed, "exit code 1");
  CHECK(failed.state.last_succeeded_at == at(9, 0));
  auto done = on_finish(d, schedule_for(d), failed.state, at(10, 5), AttemptOutcome::succeeded, "");
  CHECK(done.state.last_succeeded_at == at(10, 5));
  auto manual = on_manual_finish(schedule_for(d), failed.state, at(10, 7), AttemptOutcome::succeeded, "");
  CHECK(manual.state.last_succeeded_at == at(10, 7));
}

TEST_CASE("a retry that would run past the next planned slot waits for the plan (seed 003, 2 PM)") {
  auto d = every(24h, 14h);
  d.timeout = 2h;
  d.retry = {0s, 1min, 5min, 15min, 2h};
  TaskState state;
  state.attempt_no = 5;
  state.accounted_until = at(11, 0);
  auto failed = on_finish(d, schedule_for(d), state, at(11, 30), AttemptOutcome::failed, "exit code 1");
  CHECK(failed.state.next_run_at == at(14, 0));
  CHECK_FALSE(failed.retry_pending);  // the slot's outcome is final: chains go on
}

TEST_CASE("a retry that fits before the next planned slot runs after its delay") {
  auto d = every(24h, 14h);
  d.timeout = 1h;
  TaskState state;
  state.attempt_no = 2;  // second attempt failed: the ladder's 1m
  state.accounted_until = at(9, 0);
  auto failed = on_finish(d, schedule_for(d), state, at(9, 0), AttemptOutcome::failed, "exit code 1");
  CHECK(failed.state.next_run_at == at(9, 1));
  CHECK(failed.state.attempt_no == 2);
  CHECK(failed.retry_pending);
  state.attempt_no = 1;
  auto succeeded = on_finish(d, schedule_for(d), state, at(9, 2), AttemptOutcome::succeeded, "");
  CHECK_FALSE(succeeded.retry_pending);
}

TEST_CASE("the state tells a retry still to come as on_finish decided it, queued or not") {
  auto d = every(24h, 14h);
  d.timeout = 1h;
  auto schedule = schedule_for(d);
  TaskState state;
  state.attempt_no = 2;
  state.accounted_until = at(9, 0);
  auto failed = on_finish(d, schedule, state, at(9, 0), AttemptOutcome::failed, "exit code 1");
  REQUIRE(failed.retry_pending);
  CHECK(retry_pending(schedule, failed.state, std::nullopt));
  // Queued, the retry serves 09:01 while next_run_at moves on to the plan.
  auto queued = on_enqueue(d, schedule, failed.state, at(9, 1), false);
  REQUIRE(queued.run_slot == at(9, 1));
  CHECK(queued.state.next_run_at == at(14, 0));
  CHECK(retry_pending(schedule, queued.state, queued.run_slot));
  CHECK_FALSE(retry_pending(schedule, queued.state, std::nullopt));

  // A retry that waits for the next planned slot leaves the failure final.
  d.timeout = 6h;
  auto yielded = on_finish(d, schedule_for(d), state, at(9, 0), AttemptOutcome::failed, "exit code 1");
  REQUIRE_FALSE(yielded.retry_pending);
  CHECK_FALSE(retry_pending(schedule_for(d), yielded.state, std::nullopt));

  auto succeeded = on_finish(d, schedule, state, at(9, 0), AttemptOutcome::succeeded, "");
  CHECK_FALSE(retry_pending(schedule, succeeded.state, std::nullopt));
  auto disabled = failed.state;
  disabled.disabled_until_update = true;
  CHECK_FALSE(retry_pending(schedule, disabled, std::nullopt));
}

namespace {

// The state after attempts that each fail one second after they start, each
// at the time the one before planned; `attempts` of them.
TaskState fail_attempts(const TaskDefinition& d, TaskState state, Time& now, int attempts) {
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    CAPTURE(attempt);
    REQUIRE_FALSE(state.disabled_until_update);
    auto start = on_start(d, schedule_for(d), state, now, now, "uid");
    state = on_finish(d, schedule_for(d), start.state, now + 1s, AttemptOutcome::failed, "exit code 1: boom").state;
    now = state.next_run_at.value_or(now);
  }
  return state;
}

}  // namespace

TEST_CASE("the exhausted ladder keeps the plan: the next planned slot runs and the ladder starts over there") {
  auto d = every(1h, 0s);
  d.retry = {0s, 1min};
  TaskState state;
  state.accounted_until = at(0, 0);
  Time now = at(0, 0);
  state = fail_attempts(d, state, now, 3);
  CHECK_FALSE(state.disabled_until_update);
  CHECK(state.disabled_reason.empty());
  CHECK(state.next_run_at == at(1, 0));
  CHECK(state.attempt_no == 0);  // the slot at 01:00 is a scheduled run, the ladder's first attempt again
  CHECK(state.failing_since == at(0, 0) + 1s);
  CHECK(state.ladder_exhausted_at == at(0, 1) + 3s);
  CHECK(condition_of(state) == Condition::failing);
  CHECK_FALSE(retry_pending(schedule_for(d), state, std::nullopt));

  // The next slot walks the ladder again; the streak and its first exhaustion are kept.
  auto start = on_start(d, schedule_for(d), state, now, now, "uid");
  CHECK(start.state.attempt_no == 1);
  auto again = on_finish(d, schedule_for(d), start.state, now + 1s, AttemptOutcome::failed, "exit code 1");
  CHECK(again.state.next_run_at == at(1, 0) + 1s);  // rung 1: 0s
  CHECK(again.retry_pending);
  state = fail_attempts(d, state, now, 3);
  CHECK(state.next_run_at == at(2, 0));
  CHECK(state.failing_since == at(0, 0) + 1s);
  CHECK(state.ladder_exhausted_at == at(0, 1) + 3s);

  // A success ends the streak.
  start = on_start(d, schedule_for(d), state, now, now, "uid");
  auto done = on_finish(d, schedule_for(d), start.state, now + 1s, AttemptOutcome::succeeded, "");
  CHECK_FALSE(done.state.failing_since);
  CHECK_FALSE(done.state.ladder_exhausted_at);
}

TEST_CASE("with no retries, each failed slot exhausts the ladder and the next slot runs (after finish: the delay)") {
  auto d = every(1h, 0s);
  d.retry = {};
  TaskState state;
  state.accounted_until = at(0, 0);
  state.attempt_no = 1;
  auto failed = on_finish(d, schedule_for(d), state, at(0, 5), AttemptOutcome::timed_out, "timed out");
  CHECK(failed.state.next_run_at == at(1, 0));
  CHECK(failed.state.ladder_exhausted_at == at(0, 5));
  CHECK_FALSE(failed.retry_pending);

  d.after_finish = true;
  failed = on_finish(d, schedule_for(d), state, at(0, 5), AttemptOutcome::lost, "lost");
  CHECK(failed.state.next_run_at == at(1, 5));
  CHECK(failed.state.attempt_no == 0);
}

TEST_CASE("a failing streak starts at its first failure, manual runs too, and a manual success ends it") {
  auto d = every(1h, 0s);
  TaskState state;
  state.attempt_no = 1;
  auto manual = on_manual_finish(schedule_for(d), state, at(9, 0), AttemptOutcome::failed, "exit code 1");
  CHECK(manual.state.failing_since == at(9, 0));
  auto retried = on_finish(d, schedule_for(d), manual.state, at(9, 30), AttemptOutcome::failed, "exit code 1");
  CHECK(retried.state.failing_since == at(9, 0));
  auto recovered = on_manual_finish(schedule_for(d), retried.state, at(9, 40), AttemptOutcome::succeeded, "");
  CHECK_FALSE(recovered.state.failing_since);
}

TEST_CASE("with disable_when_exhausted the exhausted ladder disables the task until it is updated, with the reason") {
  auto d = every(1h, 0s);
  d.disable_when_exhausted = true;
  TaskState state;
  state.accounted_until = at(0, 0);
  Time now = at(0, 0);
  for (int attempt = 1; attempt <= 7; ++attempt) {
    CAPTURE(attempt);
    REQUIRE_FALSE(state.disabled_until_update);
    auto start = on_start(d, schedule_for(d), state, now, now, "uid");
    auto failed = on_finish(d, schedule_for(d), start.state, now + 1s, AttemptOutcome::failed, "exit code 1: boom");
    state = failed.state;
    now = state.next_run_at.value_or(now);
  }
  CHECK(state.disabled_until_update);
  CHECK(state.disabled_reason == "Cannot run fetch after 7 attempt(s): exit code 1: boom");
  CHECK_FALSE(state.next_run_at);
}

TEST_CASE("a permanent exit code disables at once with the child's own reason") {
  auto d = every(1h, 0s);
  TaskState state;
  state.attempt_no = 1;
  auto failed = on_finish(d, schedule_for(d), state, at(10, 0), AttemptOutcome::permanent_failure,
                          "Provided URL is invalid: https://example.com/broken");
  CHECK(failed.state.disabled_until_update);
  CHECK(failed.state.disabled_reason == "Provided URL is invalid: https://example.com/broken");
  CHECK(failed.state.last_status == RunStatus::failed);
}

TEST_CASE("fixed delay: a 3-minute run with a 5-minute delay starts every 8 minutes (seed 000)") {
  auto d = every(5min, 0s);
  d.after_finish = true;
  d.timeout = 10min;
  TaskState state = on_create(schedule_for(d), at(10, 0), true);
  Time start_at = *state.next_run_at;
  for (int run = 0; run < 3; ++run) {
    CHECK(start_at == at(10, 0) + run * 8min);
    auto queued = on_enqueue(d, schedule_for(d), state, start_at, false);
    CHECK(queued.run_slot == start_at);
    CHECK_FALSE(queued.state.next_run_at);  // not due again until this run ends
    auto start = on_start(d, schedule_for(d), queued.state, start_at, start_at, "uid");
    CHECK(start.state.next_run_at == start_at + 15min);  // safety net: timebox + delay
    auto done = on_finish(d, schedule_for(d), start.state, start_at + 3min, AttemptOutcome::succeeded, "");
    state = done.state;
    start_at = *state.next_run_at;
  }
}

TEST_CASE("slots that came due during a long run are recorded as skipped at its end") {
  auto d = every(60s, 0s);
  d.timeout = 5min;
  TaskState state;
  state.accounted_until = at(10, 0);
  auto start = on_start(d, schedule_for(d), state, at(10, 0), at(10, 0), "uid");
  CHECK(start.state.next_run_at == at(10, 6));
  auto done = on_finish(d, schedule_for(d), start.state, at(10, 3, 30), AttemptOutcome::succeeded, "");
  REQUIRE(done.skipped);
  CHECK(done.skipped->count == 3);
  CHECK(done.skipped->first == at(10, 1));
  CHECK(done.state.next_run_at == at(10, 4));
  CHECK(done.state.accounted_until == at(10, 3));
}

TEST_CASE("slots that pass while paused are skipped on resume, and the plan goes on") {
  auto d = every(60s, 0s);
  TaskState state;
  state.paused = true;
  state.next_run_at = at(10, 1);
  state.accounted_until = at(10, 0);
  auto resumed = on_resume(schedule_for(d), state, at(10, 10, 30));
  CHECK_FALSE(resumed.state.paused);
  CHECK(resumed.state.next_run_at == at(10, 11));
  REQUIRE(resumed.skipped);
  CHECK(resumed.skipped->count == 10);
  CHECK(resumed.skipped->reason.find("paused") != std::string::npos);
}

TEST_CASE("a pending --start-now run survives a pause; only planned slots are skipped") {
  auto d = every(60s, 0s);
  auto created = on_create(schedule_for(d), at(10, 0, 10), true);
  created.paused = true;
  auto resumed = on_resume(schedule_for(d), created, at(10, 5, 30));
  CHECK(resumed.state.next_run_at == at(10, 0, 10));
  REQUIRE(resumed.skipped);
  CHECK(resumed.skipped->count == 5);
  auto queued = on_enqueue(d, schedule_for(d), resumed.state, at(10, 5, 31), false);
  CHECK(queued.run_slot == at(10, 0, 10));
  CHECK_FALSE(queued.skipped);
  CHECK(queued.state.next_run_at == at(10, 6));
}

TEST_CASE("jitter: a stable delay in [0, jitter) per run index, never for retries") {
  auto d = every(60s, 0s);
  d.jitter = 30s;
  std::set<std::int64_t> seen;
  for (std::int64_t index = 1; index <= 200; ++index) {
    auto delay = jitter_delay(d, index);
    CHECK(delay >= 0s);
    CHECK(delay < 30s);
    CHECK(delay == jitter_delay(d, index));
    seen.insert(delay.count());
  }
  CHECK(seen.size() > 20);  // spread, not one value
  d.jitter = 0s;
  CHECK(jitter_delay(d, 7) == 0s);
}

TEST_CASE("a jittered slot is queued at its slot and may start only after its delay") {
  auto d = every(60s, 0s);
  d.jitter = 30s;
  auto state = on_create(schedule_for(d), at(9, 59, 30), false);
  auto queued = on_enqueue(d, schedule_for(d), state, at(10, 0), false);
  CHECK(queued.run_slot == at(10, 0));
  CHECK(queued.not_before == at(10, 0) + jitter_delay(d, 1));
  CHECK(queued.state.next_run_at == at(10, 1));  // the plan does not drift

  state.attempt_no = 1;  // a retry is due: it starts at once
  auto retry = on_enqueue(d, schedule_for(d), state, at(10, 0), false);
  CHECK(retry.trigger == Trigger::retry);
  CHECK(retry.not_before == at(10, 0));
}

TEST_CASE("jittered starts closer than the interval are not dropped") {
  auto d = every(60s, 0s);
  d.jitter = 30s;
  TaskState state;
  state.last_run_at = at(10, 0, 29);
  CHECK_FALSE(drop_reason(d, schedule_for(d), state, Trigger::schedule, at(10, 1, 1)));
}

TEST_CASE("the drop rule uses the tolerance: 57 s after the last run starts, 28 s is dropped (seed 004)") {
  auto d = every(60s, 30s);
  TaskState state;
  state.last_run_at = at(0, 0, 35);
  CHECK_FALSE(drop_reason(d, schedule_for(d), state, Trigger::schedule, at(0, 1, 32)));
  state.last_run_at = at(0, 1, 35);
  auto dropped = drop_reason(d, schedule_for(d), state, Trigger::schedule, at(0, 2, 3));
  REQUIRE(dropped);
  CHECK(dropped->find("tolerance 6s") != std::string::npos);
  CHECK_FALSE(drop_reason(d, schedule_for(d), state, Trigger::retry, at(0, 2, 3)));
}

TEST_CASE("a one-second task keeps its tolerance of 100 ms: a start 50 ms late is followed, not dropped") {
  auto d = every(1s, 0s);
  TaskState state;
  state.last_run_at = at(0, 0, 0, 50);
  CHECK(effective_tolerance(d, 1s) == 100ms);
  CHECK_FALSE(drop_reason(d, schedule_for(d), state, Trigger::schedule, at(0, 0, 1, 5)));
  auto dropped = drop_reason(d, schedule_for(d), state, Trigger::schedule, at(0, 0, 0, 900));
  REQUIRE(dropped);
  CHECK(dropped->find("started 850ms ago, sooner than interval 1s - tolerance 100ms "
                      "(last run 2026-11-21T00:00:00.050Z)") != std::string::npos);
}

TEST_CASE("the default timebox is half the interval; one hour without an interval") {
  auto d = every(10min, 0s);
  CHECK(effective_timeout(d, schedule_for(d), at(0, 0)) == 5min);
  d.timeout = 42s;
  CHECK(effective_timeout(d, schedule_for(d), at(0, 0)) == 42s);
  TaskDefinition manual;
  manual.schedule_kind = ScheduleKind::manual;
  CHECK(effective_timeout(manual, Manual{}, at(0, 0)) == 1h);
  CHECK(effective_timeout(every(1s, 0s), Schedule{Every{1s, 0s}}, at(0, 0)) == 1s);
}

TEST_CASE("--timeout none: no timebox; the slots that come while the run runs are met as they come") {
  auto d = every(30min, 0s);
  d.timeout = 0s;
  CHECK_FALSE(effective_timeout(d, schedule_for(d), at(10, 0)));
  TaskState state;
  state.accounted_until = at(10, 0);
  auto start = on_start(d, schedule_for(d), state, at(10, 0), at(10, 0), "uid");
  CHECK(start.state.next_run_at == at(10, 30));
  CHECK(start.deadline > at(10, 0) + 24h * 365);
  // Still running at the next slot: skipped there, the one after planned.
  auto due = on_enqueue(d, schedule_for(d), start.state, at(10, 30), true);
  REQUIRE(due.skipped);
  CHECK_FALSE(due.run_slot);
  CHECK(due.state.next_run_at == at(11, 0));
}

// Seed 004's four timelines, replayed event by event with overlap=queue (the
// nuntium model), one minute interval, the tick every 30 seconds.
namespace {

struct Nuntium {
  TaskDefinition d = [] {
    auto definition = every(60s, 30s);
    definition.overlap = Overlap::queue;
    return definition;
  }();
  Schedule schedule = schedule_for(d);
  TaskState state = on_create(schedule, at(0, 0), false);
  std::vector<Time> queue;

  void tick(Time now) {
    if (!state.next_run_at || *state.next_run_at > now) return;
    auto decision = on_enqueue(d, schedule, state, now, !queue.empty());
    if (decision.run_slot) queue.push_back(*decision.run_slot);
    state = decision.state;
  }
  bool begin(Time now) {
    queue.erase(queue.begin());
    if (drop_reason(d, schedule, state, Trigger::schedule, now)) return false;
    state = on_start(d, schedule, state, now, now, "uid").state;
    return true;
  }
  void end(Time now, AttemptOutcome outcome) { state = on_finish(d, schedule, state, now, outcome, "").state; }
};

}  // namespace

TEST_CASE("seed 004 timeline 1: standard flow, A2 runs 57 s after A1") {
  Nuntium a;
  CHECK(a.state.next_run_at == at(0, 0, 30));
  a.tick(at(0, 0, 30));
  CHECK(a.state.next_run_at == at(0, 1, 30));
  CHECK(a.begin(at(0, 0, 35)));
  CHECK(a.state.last_run_at == at(0, 0, 35));
  CHECK(a.state.next_run_at == at(0, 1, 30));
  a.end(at(0, 0, 45), AttemptOutcome::succeeded);
  a.tick(at(0, 1, 0));
  CHECK(a.state.next_run_at == at(0, 1, 30));
  a.tick(at(0, 1, 30));
  CHECK(a.state.next_run_at == at(0, 2, 30));
  CHECK(a.begin(at(0, 1, 32)));
  CHECK(a.state.next_run_at == at(0, 2, 30));
}

TEST_CASE("seed 004 timeline 2: a full queue keeps the gap, A2 is not dropped") {
  Nuntium a;
  a.tick(at(0, 0, 30));
  a.tick(at(0, 1, 0));
  a.tick(at(0, 1, 30));
  CHECK(a.queue.size() == 2);
  CHECK(a.state.next_run_at == at(0, 2, 30));
  CHECK(a.begin(at(0, 1, 35)));
  CHECK(a.state.next_run_at == at(0, 2, 30));
  a.end(at(0, 1, 38), AttemptOutcome::succeeded);
  a.tick(at(0, 2, 0));
  a.tick(at(0, 2, 30));
  CHECK(a.state.next_run_at == at(0, 3, 30));
  CHECK(a.begin(at(0, 2, 37)));
  CHECK(a.state.next_run_at == at(0, 3, 30));
}

TEST_CASE("seed 004 timeline 3: A2 starting 28 s after A1 is dropped, A3 runs") {
  Nuntium a;
  a.tick(at(0, 0, 30));
  a.tick(at(0, 1, 0));
  a.tick(at(0, 1, 30));
  CHECK(a.begin(at(0, 1, 35)));
  a.end(at(0, 1, 38), AttemptOutcome::succeeded);
  a.tick(at(0, 2, 0));
  CHECK_FALSE(a.begin(at(0, 2, 3)));
  CHECK(a.state.last_run_at == at(0, 1, 35));
  CHECK(a.state.next_run_at == at(0, 2, 30));
  a.tick(at(0, 2, 30));
  CHECK(a.state.next_run_at == at(0, 3, 30));
  CHECK(a.begin(at(0, 2, 56)));
  CHECK(a.state.last_run_at == at(0, 2, 56));
  CHECK(a.state.next_run_at == at(0, 3, 30));
}

TEST_CASE("seed 004 timeline 4: A1 hits its timebox, A2 still starts on time") {
  Nuntium a;
  a.tick(at(0, 0, 30));
  CHECK(a.begin(at(0, 0, 35)));
  CHECK(a.state.attempt_timeout_at == at(0, 1, 5));
  a.tick(at(0, 1, 0));
  a.end(at(0, 1, 5), AttemptOutcome::timed_out);
  CHECK(a.state.last_run_at == at(0, 0, 35));
  // The immediate retry would run past 01:30, so it waits for the plan.
  CHECK(a.state.next_run_at == at(0, 1, 30));
  a.tick(at(0, 1, 30));
  CHECK(a.state.next_run_at == at(0, 2, 30));
  CHECK(a.begin(at(0, 1, 32)));
}

// Manual runs, replace and edit.

TEST_CASE("fixed delay: a manual trigger between runs leaves the 8-minute rotation unchanged (seed 000)") {
  auto d = every(5min, 0s);
  d.after_finish = true;
  d.timeout = 10min;
  auto schedule = schedule_for(d);
  TaskState state = on_create(schedule, at(10, 0), true);
  auto run = [&](Time start_at) {
    auto queued = on_enqueue(d, schedule, state, start_at, false);
    auto start = on_start(d, schedule, queued.state, start_at, start_at, "uid");
    state = on_finish(d, schedule, start.state, start_at + 3min, AttemptOutcome::succeeded, "").state;
  };
  run(at(10, 0));
  REQUIRE(state.next_run_at == at(10, 8));
  // The user triggers a run at 10:04 that takes 3 minutes.
  auto manual = on_manual_start(d, schedule, state, at(10, 4), "uid-manual");
  CHECK(manual.state.attempt_uid == "uid-manual");
  CHECK(manual.state.run_index == 2);
  CHECK(manual.state.next_run_at == at(10, 8));
  CHECK(manual.state.last_run_at == at(10, 0));
  state = on_manual_finish(schedule, manual.state, at(10, 7), AttemptOutcome::succeeded, "").state;
  CHECK(state.next_run_at == at(10, 8));
  CHECK(state.attempt_no == 0);
  CHECK(state.last_finished_at == at(10, 7));
  run(at(10, 8));
  CHECK(state.next_run_at == at(10, 16));
}

TEST_CASE("a manual run is not dropped and does not make the next planned run too soon") {
  auto d = every(5min, 0s);
  auto schedule = schedule_for(d);
  TaskState state = on_create(schedule, at(10, 0), false);
  state = on_start(d, schedule, state, at(10, 0), at(10, 0), "uid").state;
  state = on_finish(d, schedule, state, at(10, 1), AttemptOutcome::succeeded, "").state;
  CHECK_FALSE(drop_reason(d, schedule, state, Trigger::manual, at(10, 2)));
  state = on_manual_start(d, schedule, state, at(10, 4), "m").state;
  state = on_manual_finish(schedule, state, at(10, 4, 30), AttemptOutcome::succeeded, "").state;
  CHECK_FALSE(drop_reason(d, schedule, state, Trigger::schedule, at(10, 5)));
}

TEST_CASE("a failed manual run does not walk the retry ladder; a successful one ends a failing streak") {
  auto d = every(1h, 0s);
  auto schedule = schedule_for(d);
  TaskState state = on_create(schedule, at(10, 0), false);
  auto manual = on_manual_start(d, schedule, state, at(10, 10), "m");
  auto failed = on_manual_finish(schedule, manual.state, at(10, 11), AttemptOutcome::failed, "exit code 1");
  CHECK(failed.state.attempt_no == 0);
  CHECK(failed.state.next_run_at == at(11, 0));
  CHECK(failed.state.last_status == RunStatus::failed);
  CHECK_FALSE(failed.state.disabled_until_update);

  // The 11:00 run and its first retry fail: the next retry is planned 1m later.
  state = on_start(d, schedule, failed.state, at(11, 0), at(11, 0), "s").state;
  state = on_finish(d, schedule, state, at(11, 1), AttemptOutcome::failed, "boom").state;
  state = on_start(d, schedule, state, at(11, 1), at(11, 1), "s2").state;
  state = on_finish(d, schedule, state, at(11, 2), AttemptOutcome::failed, "boom").state;
  REQUIRE(state.attempt_no == 2);
  REQUIRE(state.next_run_at == at(11, 3));
  // A manual run that succeeds meanwhile makes the retry unnecessary.
  state = on_manual_start(d, schedule, state, at(11, 2, 30), "m2").state;
  CHECK(state.attempt_no == 3);
  state = on_manual_finish(schedule, state, at(11, 2, 40), AttemptOutcome::succeeded, "").state;
  CHECK(state.attempt_no == 0);
  CHECK(state.next_run_at == at(12, 0));
}

TEST_CASE("a manual run that exits with a permanent code disables the task") {
  auto d = every(1h, 0s);
  auto schedule = schedule_for(d);
  auto manual = on_manual_start(d, schedule, on_create(schedule, at(10, 0), false), at(10, 10), "m");
  auto done = on_manual_finish(schedule, manual.state, at(10, 11), AttemptOutcome::permanent_failure, "bad URL");
  CHECK(done.state.disabled_until_update);
  CHECK(done.state.disabled_reason == "bad URL");
  CHECK_FALSE(done.state.next_run_at);
}

TEST_CASE("a replaced attempt ends without counting: the newer run inherits its number") {
  auto d = every(1h, 0s);
  auto schedule = schedule_for(d);
  auto started = on_start(d, schedule, on_create(schedule, at(10, 0), false), at(11, 0), at(11, 0), "old");
  auto replaced = on_replace(started.state);
  CHECK(replaced.attempt_uid.empty());
  CHECK(replaced.attempt_no == 0);
  CHECK_FALSE(replaced.attempt_timeout_at);
  CHECK(on_start(d, schedule, replaced, at(12, 0), at(12, 0), "new").state.attempt_no == 1);
}

TEST_CASE("an attempt that taskd's shutdown ended does not count: its slot starts again, not dropped") {
  auto d = every(1h, 0s);
  auto schedule = schedule_for(d);
  auto before = on_finish(d, schedule, on_start(d, schedule, on_create(schedule, at(9, 0), false), at(10, 0),
                                                at(10, 0), "failed").state,
                          at(10, 1), AttemptOutcome::failed, "boom").state;
  auto started = on_start(d, schedule, before, at(11, 0), at(11, 0), "ended");
  auto ended = on_shutdown_end(started.state, before);
  CHECK(ended.attempt_uid.empty());
  CHECK_FALSE(ended.attempt_timeout_at);
  CHECK(ended.attempt_no == before.attempt_no);
  CHECK(ended.run_index == before.run_index);
  CHECK(ended.last_run_at == before.last_run_at);
  CHECK(ended.last_status == before.last_status);
  CHECK(ended.next_run_at == started.state.next_run_at);  // the plan goes on
  CHECK_FALSE(drop_reason(d, schedule, ended, Trigger::schedule, at(11, 0) + 30s));
  CHECK(on_start(d, schedule, ended, at(11, 0), at(11, 1), "again").state.attempt_no == before.attempt_no + 1);
}

TEST_CASE("an edit enables a disabled task; a new schedule plans from the time of the edit") {
  auto d = every(1h, 0s);
  auto schedule = schedule_for(d);
  TaskState disabled = on_create(schedule, at(10, 0), false);
  disabled.disabled_until_update = true;
  disabled.disabled_reason = "Cannot run fetch after 7 attempt(s): boom";
  disabled.attempt_no = 7;
  disabled.next_run_at.reset();
  auto same = on_edit(schedule, disabled, at(12, 30), false);
  CHECK_FALSE(same.state.disabled_until_update);
  CHECK(same.state.disabled_reason.empty());
  CHECK(same.state.attempt_no == 0);
  CHECK(same.state.next_run_at == at(13, 0));

  auto faster = every(15min, 0s);
  TaskState active = on_create(schedule, at(10, 0), false);
  auto moved = on_edit(schedule_for(faster), active, at(10, 20), true);
  CHECK(moved.state.next_run_at == at(10, 30));
  CHECK(moved.state.accounted_until == at(10, 20));
  CHECK_FALSE(moved.skipped);
  CHECK(on_edit(schedule, active, at(10, 20), false).state.next_run_at == at(11, 0));
}

TEST_CASE("refresh every 30 minutes with a 1-hour timeout: the next start waits for the timebox (seed 003)") {
  auto d = every(30min, 0s);
  d.timeout = 1h;
  auto schedule = schedule_for(d);
  TaskState state = on_create(schedule, at(9, 59), false);
  auto queued = on_enqueue(d, schedule, state, at(10, 0), false);
  CHECK(queued.state.next_run_at == at(10, 30));
  auto start = on_start(d, schedule, queued.state, at(10, 0), at(10, 0), "uid");
  // No second refresh may start while this one can still run: not 10:30 or 11:00.
  CHECK(start.deadline == at(11, 0));
  CHECK(start.state.next_run_at == at(11, 30));
  // It hits the timebox: the ladder's first rung (0s) would run at 11:00 with a
  // deadline past 11:30, so the retry is the 11:30 slot itself.
  auto timed_out = on_finish(d, schedule, start.state, at(11, 0), AttemptOutcome::timed_out, "timed out");
  CHECK(timed_out.state.next_run_at == at(11, 30));
  CHECK(timed_out.state.attempt_no == 1);
}

TEST_CASE("with overlap=replace the next slot stays planned however long the timebox") {
  auto d = every(1min, 0s);
  d.timeout = 10min;
  d.overlap = Overlap::replace;
  TaskState state = on_create(schedule_for(d), at(10, 0, 30), false);
  state = on_enqueue(d, schedule_for(d), state, at(10, 1), false).state;
  auto start = on_start(d, schedule_for(d), state, at(10, 1), at(10, 1), "uid");
  CHECK(start.deadline == at(10, 11));
  CHECK(start.state.next_run_at == at(10, 2));
}

TEST_CASE("an outcome decided with an earlier clock than a committed tick does not plan an accounted slot again") {
  // A worker reads its clock, then waits for the write lock while the
  // scheduler's tick, with a later clock, records the next slot as SKIPPED
  // (the run was still running). The worker's plan must not bring that slot back.
  auto d = every(60s, 0s);
  auto state = on_create(schedule_for(d), at(10, 0), false);
  state = on_enqueue(d, schedule_for(d), state, at(10, 1, 0, 5), false).state;
  state = on_start(d, schedule_for(d), state, at(10, 1), at(10, 1, 0, 10), "uid").state;
  auto tick = on_enqueue(d, schedule_for(d), state, at(10, 2, 0, 50), true);
  REQUIRE(tick.skipped);
  CHECK(tick.skipped->last == at(10, 2));
  state = tick.state;
  state.next_run_at = at(10, 2);  // as the worker's start decision had planned it

  auto success = on_finish(d, schedule_for(d), state, at(10, 1, 59, 990), AttemptOutcome::succeeded, "");
  CHECK(success.state.next_run_at == at(10, 3));
  // The retry (0s, timebox 30s) ends before the next unaccounted slot,
  // 10:03, so it is kept and serves no slot; planned from the worker's
  // clock it would have become the 10:02 slot, which has its row already.
  auto retry = on_finish(d, schedule_for(d), state, at(10, 1, 59, 990), AttemptOutcome::failed, "exit code 1");
  CHECK(retry.state.next_run_at == at(10, 1, 59, 990));
}

TEST_CASE("--catch-up none skips every missed slot, but not one the scheduler is merely seconds late for") {
  auto d = every(3600s, 0s);
  d.catch_up = CatchUp{CatchUp::Kind::none, std::nullopt};
  auto state = on_create(schedule_for(d), at(7, 59, 30), false);  // next slot 08:00
  auto missed = on_enqueue(d, schedule_for(d), state, at(10, 5, 30), false);
  CHECK_FALSE(missed.run_slot);
  REQUIRE(missed.skipped);
  CHECK(missed.skipped->count == 3);  // 08:00 to 10:00
  CHECK(missed.skipped->reason.find("--catch-up none") != std::string::npos);
  CHECK(missed.state.next_run_at == at(11, 0));
  auto on_time = on_enqueue(d, schedule_for(d), state, at(8, 0, 2), false);
  CHECK(on_time.run_slot == at(8, 0));
}

TEST_CASE("--catch-up-window skips the missed slots older than the window; the latest inside it runs") {
  auto d = every(60s, 0s);
  d.catch_up_window = 10min;
  auto state = on_create(schedule_for(d), at(9, 59, 30), false);
  auto inside = on_enqueue(d, schedule_for(d), state, at(10, 5, 30), false);
  CHECK(inside.run_slot == at(10, 5));
  auto hourly = every(3600s, 0s);
  hourly.catch_up_window = 10min;
  auto hourly_state = on_create(schedule_for(hourly), at(9, 59, 30), false);
  auto beyond = on_enqueue(hourly, schedule_for(hourly), hourly_state, at(10, 30), false);
  CHECK_FALSE(beyond.run_slot);
  REQUIRE(beyond.skipped);
  CHECK(beyond.skipped->reason.find("catch-up window of 10m") != std::string::npos);
  CHECK(beyond.state.next_run_at == at(11, 0));
}

TEST_CASE("--catch-up all runs every missed slot, oldest first, each after the one before") {
  auto d = every(3600s, 0s);
  d.catch_up = CatchUp{CatchUp::Kind::all, std::nullopt};
  auto schedule = schedule_for(d);
  auto state = on_create(schedule, at(7, 30), false);  // 08:00, 09:00 and 10:00 missed by 10:30
  auto first = on_enqueue(d, schedule, state, at(10, 30), false);
  CHECK(first.run_slot == at(8, 0));
  CHECK_FALSE(first.skipped);
  CHECK_FALSE(first.state.next_run_at);  // the next missed slot waits for this run's end
  auto start = on_start(d, schedule, first.state, at(8, 0), at(10, 30), "uid-1");
  CHECK_FALSE(start.skipped);
  auto done = on_finish(d, schedule, start.state, at(10, 31), AttemptOutcome::succeeded, "");
  CHECK_FALSE(done.skipped);
  CHECK(done.state.next_run_at == at(10, 31));
  // Not dropped, though it starts a minute after the run before.
  CHECK_FALSE(drop_reason(d, schedule, done.state, Trigger::schedule, at(10, 31)));
  auto second = on_enqueue(d, schedule, done.state, at(10, 31), false);
  CHECK(second.run_slot == at(9, 0));
  auto third = on_enqueue(d, schedule, on_finish(d, schedule, on_start(d, schedule, second.state, at(9, 0), at(10, 31),
                                                                       "uid-2").state,
                                                 at(10, 32), AttemptOutcome::succeeded, "").state,
                          at(10, 32), false);
  CHECK(third.run_slot == at(10, 0));
  CHECK(third.state.next_run_at == at(11, 0));  // caught up: back to the plan
}

TEST_CASE("--catch-up all:N runs the N latest missed slots and skips the older ones") {
  auto d = every(3600s, 0s);
  d.catch_up = CatchUp{CatchUp::Kind::all, 2};
  auto schedule = schedule_for(d);
  auto state = on_create(schedule, at(5, 30), false);  // 06:00 to 10:00 missed by 10:30
  auto first = on_enqueue(d, schedule, state, at(10, 30), false);
  CHECK(first.run_slot == at(9, 0));
  REQUIRE(first.skipped);
  CHECK(first.skipped->count == 3);
  CHECK(first.skipped->last == at(8, 0));
  CHECK(first.skipped->reason.find("more than 2 missed slots") != std::string::npos);
}

TEST_CASE("--catch-up all waits for a run of the task started another way instead of skipping") {
  auto d = every(3600s, 0s);
  d.catch_up = CatchUp{CatchUp::Kind::all, std::nullopt};
  auto schedule = schedule_for(d);
  auto state = on_create(schedule, at(7, 30), false);
  auto waiting = on_enqueue(d, schedule, state, at(10, 30), true);
  CHECK_FALSE(waiting.run_slot);
  CHECK_FALSE(waiting.skipped);
  CHECK(waiting.state.next_run_at == at(10, 31));
  CHECK(waiting.state.accounted_until == state.accounted_until);
}

TEST_CASE("catch-up policies read and print as written") {
  CHECK(to_string(parse_catch_up("all:12").value()) == "all:12");
  CHECK(to_string(parse_catch_up("none").value()) == "none");
  for (auto bad : {"all:0", "all:", "all:+3", "every", "all:3x", ""}) {
    INFO(bad);
    CHECK_FALSE(parse_catch_up(bad));
  }
}

TEST_CASE("--catch-up all with every missed slot beyond the window runs none of them and waits for the next") {
  auto d = every(3600s, 0s);
  d.catch_up = CatchUp{CatchUp::Kind::all, std::nullopt};
  d.catch_up_window = 10min;
  auto schedule = schedule_for(d);
  auto state = on_create(schedule, at(7, 30), false);  // 08:00 to 10:00, all older than 10:20
  auto decision = on_enqueue(d, schedule, state, at(10, 30), false);
  CHECK_FALSE(decision.run_slot);
  REQUIRE(decision.skipped);
  CHECK(decision.skipped->count == 3);
  CHECK(decision.state.next_run_at == at(11, 0));
}

namespace {

Time utc(const char* text) { return parse_rfc3339(text).value(); }

// Weekdays at 09:00 in Berlin (by default), with --skip-calendar days.
TaskDefinition weekdays_skipping(std::vector<date::local_days> days, std::string cron = "0 9 * * 1-5",
                                 std::string tz = "Europe/Berlin") {
  TaskDefinition d;
  d.name = "report";
  d.schedule_kind = ScheduleKind::cron;
  d.schedule_spec = std::move(cron);
  d.tz = std::move(tz);
  d.retry = default_retry_ladder();
  d.skip_calendar = {"de-holidays"};
  d.calendar_days.skipped = std::move(days);
  return d;
}

date::local_days day(int y, int m, int d) {
  return date::local_days{date::year{y} / date::month{static_cast<unsigned>(m)} / date::day{static_cast<unsigned>(d)}};
}

}  // namespace

TEST_CASE("the slot after a skipped day accounts for that day: one row a day, once") {
  auto d = weekdays_skipping({day(2026, 12, 25)});
  auto schedule = schedule_for(d);
  TaskState state;
  state.accounted_until = utc("2026-12-24T08:00:00Z");
  state.next_run_at = next_slot_after(schedule, *state.accounted_until);
  REQUIRE(state.next_run_at == utc("2026-12-28T08:00:00Z"));  // Friday the 25th is skipped
  auto decision = on_enqueue(d, schedule, state, utc("2026-12-28T08:00:01Z"), false);
  CHECK_FALSE(decision.skipped);  // no slot of the schedule was missed
  auto skips = calendar_skips(d, state.accounted_until, decision.state.accounted_until).value();
  REQUIRE(skips.days.size() == 1);
  CHECK(skips.days[0].day == day(2026, 12, 25));
  CHECK(skips.days[0].slots.count == 1);
  CHECK(skips.days[0].slots.first == utc("2026-12-25T08:00:00Z"));
  CHECK(skips.more_days == 0);
  std::vector<NamedCalendar> calendars{{"de-holidays", {{day(2026, 12, 25), "Christmas Day"}}}};
  CHECK(skipped_day(skips.days[0], skipped_day_words(skips.days[0].day, calendars)).reason ==
        "slot 2026-12-25T08:00:00Z skipped: 2026-12-25 is Christmas Day in de-holidays");
  // What the next decision accounts starts after it: the day is not told again.
  auto next = on_enqueue(d, schedule, decision.state, utc("2026-12-29T08:00:01Z"), false);
  CHECK(calendar_skips(d, decision.state.accounted_until, next.state.accounted_until).value().days.empty());
}

TEST_CASE("a skipped day's row stands for all its slots, the day of the task's zone") {
  auto d = weekdays_skipping({day(2026, 12, 25)}, "* * * * *");
  auto skips = calendar_skips(d, utc("2026-12-24T12:00:00Z"), utc("2026-12-26T12:00:00Z")).value();
  REQUIRE(skips.days.size() == 1);
  CHECK(skips.days[0].slots.count == 1440);
  CHECK(skips.days[0].slots.first == utc("2026-12-24T23:00:00Z"));  // midnight in Berlin
  CHECK(skipped_day(skips.days[0], "x").reason ==
        "1440 slots from 2026-12-24T23:00:00Z to 2026-12-25T22:59:00Z skipped: x");
  // Only what lies in the span: a day accounted in part gets the rest later.
  CHECK(calendar_skips(d, utc("2026-12-25T12:00:00Z"), utc("2026-12-26T12:00:00Z")).value().days[0].slots.count == 659);
}

TEST_CASE("skipped days without own slots, and tasks without calendars, get no row") {
  auto weekend = weekdays_skipping({day(2026, 12, 26), day(2026, 12, 27)});
  CHECK(calendar_skips(weekend, utc("2026-12-24T08:00:00Z"), utc("2026-12-28T08:00:00Z")).value().days.empty());
  auto none = weekdays_skipping({});
  CHECK(calendar_skips(none, utc("2026-12-24T08:00:00Z"), utc("2027-12-28T08:00:00Z")).value().days.empty());
  CHECK(calendar_skips(weekend, std::nullopt, utc("2027-12-28T08:00:00Z")).value().days.empty());
}

TEST_CASE("years of skipped days: a row each for the first, one row for the rest") {
  std::vector<date::local_days> days;
  for (auto d = day(2027, 1, 1); d < day(2029, 1, 1); d += date::days{1}) days.push_back(d);
  auto d = weekdays_skipping(days, "0 9 * * *", "UTC");
  auto skips = calendar_skips(d, utc("2026-12-31T09:00:00Z"), utc("2029-01-01T09:00:00Z")).value();
  CHECK(skips.days.size() == max_skipped_day_rows);
  CHECK(skips.days.back().day == day(2027, 4, 10));
  CHECK(skips.more_days == 731 - 100);
  CHECK(skips.more_first == utc("2027-04-11T09:00:00Z"));
  CHECK(skips.more_last == utc("2028-12-31T09:00:00Z"));
  CHECK(skipped_more_days(skips, "days of de-holidays (--skip-calendar)").reason ==
        "slots on 631 more days from 2027-04-11T09:00:00Z to 2028-12-31T09:00:00Z skipped: days of de-holidays "
        "(--skip-calendar)");
  CHECK(last_skipped_slot(skipped_more_days(skips, "x").reason) == utc("2028-12-31T09:00:00Z"));
}

TEST_CASE("the days a calendar removes slots from are walked in order, with their first and last slot") {
  auto d = weekdays_skipping({day(2026, 12, 25), day(2026, 12, 26), day(2027, 1, 1)}, "0 9,17 * * 1-5");
  auto days = calendar_skipped_days(d, utc("2026-12-25T12:00:00Z")).value();
  auto first = days.next();
  REQUIRE(first);
  CHECK(first->day == day(2026, 12, 25));
  CHECK(first->first == utc("2026-12-25T16:00:00Z"));  // the 09:00 slot came before `from`
  CHECK(first->last == utc("2026-12-25T16:00:00Z"));
  auto second = days.next();  // the 26th is a Saturday: no slot to remove
  REQUIRE(second);
  CHECK(second->day == day(2027, 1, 1));
  CHECK(second->first == utc("2027-01-01T08:00:00Z"));
  CHECK(second->last == utc("2027-01-01T16:00:00Z"));
  CHECK_FALSE(days.next());
}

TEST_CASE("a skipped day is told in its first calendar's words") {
  std::vector<NamedCalendar> calendars{{"us-holidays", {{day(2026, 11, 26), "Thanksgiving"}}},
                                       {"de-holidays", {{day(2026, 12, 25), "Christmas Day"}, {day(2026, 12, 31), ""}}}};
  CHECK(skipped_day_words(day(2026, 12, 25), calendars) == "2026-12-25 is Christmas Day in de-holidays");
  CHECK(skipped_day_words(day(2026, 12, 31), calendars) == "2026-12-31 is a day of de-holidays");
  CHECK(skipped_day_words(day(2027, 1, 1), calendars) == "2027-01-01 is a day of us-holidays, de-holidays");
}

TEST_CASE("the interval at the epoch is kept per schedule text and never handed to another text") {
  auto cron = [](std::string spec, std::string tz) {
    TaskDefinition d;
    d.name = "report";
    d.schedule_kind = ScheduleKind::cron;
    d.schedule_spec = std::move(spec);
    d.tz = std::move(tz);
    return d;
  };
  auto hourly = cron("0 * * * *", "UTC");
  auto five_minutes = cron("*/5 * * * *", "UTC");
  auto nightly = cron("0 3 * * *", "Europe/Berlin");
  for (int round = 0; round < 3; ++round) {
    CHECK(interval_at_epoch(hourly, schedule_for(hourly)) == 1h);
    CHECK(interval_at_epoch(five_minutes, schedule_for(five_minutes)) == 5min);
    CHECK(interval_at_epoch(nightly, schedule_for(nightly)) == 24h);
  }
  auto d = every(10min, 0s);
  CHECK(interval_at_epoch(d, schedule_for(d)) == 10min);
  CHECK(effective_timeout(nightly, interval_at_epoch(nightly, schedule_for(nightly))) == 12h);
}
