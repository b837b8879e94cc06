#include <doctest/doctest.h>

#include <algorithm>

#include "core/explain.hpp"
#include "core/policy.hpp"
#include "test_helpers.hpp"

using namespace taskd::core;
using taskd::test::at;
using namespace std::chrono_literals;

namespace {

// Hourly on the hour, with the ladder 1m, 50m.
Task hourly() {
  Task task;
  task.id = 1;
  task.definition.name = "report";
  task.definition.schedule_kind = ScheduleKind::every;
  task.definition.schedule_spec = "1h";
  task.definition.retry = {60s, 3000s};
  task.state.accounted_until = at(10, 0);
  return task;
}

Schedule schedule_for(const Task& task) { return schedule_of(task.definition).value(); }

PastRun run(std::int64_t id, RunStatus status, Trigger trigger, Time slot, int attempt_no = 1) {
  PastRun r;
  r.id = id;
  r.status = status;
  r.trigger = trigger;
  r.scheduled_at = r.enqueued_at = r.not_before = slot;
  r.attempt_no = attempt_no;
  if (status != RunStatus::queued && status != RunStatus::skipped && status != RunStatus::dropped) {
    r.started_at = slot + 100ms;
    if (status != RunStatus::running) r.finished_at = slot + 2s;
  }
  return r;
}

const Fact* find(const std::vector<Fact>& facts, std::string_view kind) {
  auto it = std::find_if(facts.begin(), facts.end(), [&](const Fact& f) { return f.kind == kind; });
  return it == facts.end() ? nullptr : &*it;
}

template <class T>
T value_of(const Fact& fact, std::string_view key) {
  for (const auto& [name, value] : fact.data) {
    if (name == key) return std::get<T>(value);
  }
  FAIL("no value named ", key);
  return T{};
}

std::vector<Fact> explain(const Task& task, Time slot, const SlotHistory& history, Time now,
                          const std::vector<SchedulerSeen>& schedulers = {}) {
  return explain_slot(task, schedule_for(task), slot, history, schedulers, now);
}

}  // namespace

TEST_CASE("the slot in question: the last slot at or before a past time, the first at or after a future one") {
  auto schedule = schedule_for(hourly());
  CHECK(slot_in_question(schedule, at(9, 30), at(12, 0)) == at(9, 0));
  CHECK(slot_in_question(schedule, at(9, 0), at(12, 0)) == at(9, 0));
  CHECK(slot_in_question(schedule, at(13, 30), at(12, 0)) == at(14, 0));
  CHECK(slot_in_question(schedule, at(14, 0), at(12, 0)) == at(14, 0));
  CHECK_FALSE(slot_in_question(Manual{}, at(9, 0), at(12, 0)));
}

TEST_CASE("a whole second asked is the slot in that second, though the slot carries milliseconds") {
  auto task = hourly();
  task.definition.phase = 16500ms;
  auto schedule = schedule_for(task);
  CHECK(slot_in_question(schedule, at(9, 0, 16), at(12, 0)) == at(9, 0, 16, 500));
  CHECK(slot_in_question(schedule, at(9, 0, 15), at(12, 0)) == at(8, 0, 16, 500));
  CHECK(slot_in_question(schedule, at(9, 0, 16, 400), at(12, 0)) == at(8, 0, 16, 500));
}

TEST_CASE("a slot that ran: its queuing, jitter, start, lateness and outcome") {
  auto task = hourly();
  task.definition.jitter = 30s;
  auto ran = run(7, RunStatus::succeeded, Trigger::schedule, at(9, 0));
  ran.not_before = at(9, 0, 12);
  ran.enqueued_at = at(9, 0, 0, 5);
  ran.started_at = at(9, 0, 20);
  ran.finished_at = at(9, 1, 20);
  std::vector<SchedulerSeen> schedulers{{"web1", at(8, 0), at(9, 59, 50)}};
  auto facts = explain(task, at(9, 0), {.runs = {ran}}, at(10, 0), schedulers);
  REQUIRE(find(facts, "jitter"));
  CHECK(value_of<Millis>(*find(facts, "jitter"), "jitter") == 12s);
  REQUIRE(find(facts, "succeeded"));
  CHECK(find(facts, "succeeded")->text == "Attempt 1 started at 2026-11-21T09:00:20Z and succeeded after 1m.");
  REQUIRE(find(facts, "late"));
  CHECK(value_of<Millis>(*find(facts, "late"), "late_by") == 8s);
  CHECK(value_of<Millis>(*find(facts, "late"), "waited_in_queue") == 8s);
  REQUIRE(find(facts, "scheduler"));
  CHECK(value_of<bool>(*find(facts, "scheduler"), "scheduler_running"));
  CHECK(value_of<std::string>(*find(facts, "scheduler"), "host") == "web1");
}

TEST_CASE("a slot queued late by a missing tick says no scheduler was running then") {
  auto task = hourly();
  auto ran = run(7, RunStatus::succeeded, Trigger::schedule, at(9, 0));
  ran.enqueued_at = ran.not_before = at(9, 0);
  ran.enqueued_at = at(9, 20);
  ran.started_at = at(9, 20, 1);
  std::vector<SchedulerSeen> started_later{{"web1", at(9, 19), at(9, 59)}};
  auto facts = explain(task, at(9, 0), {.runs = {ran}}, at(10, 0), started_later);
  REQUIRE(find(facts, "late"));
  CHECK(value_of<Millis>(*find(facts, "late"), "queued_after") == 20min);
  REQUIRE(find(facts, "scheduler"));
  CHECK_FALSE(value_of<bool>(*find(facts, "scheduler"), "scheduler_running"));
}

TEST_CASE("a retry names its rung, and a retry that took the next slot says the ladder yielded to the plan") {
  auto task = hourly();
  auto first = run(1, RunStatus::failed, Trigger::schedule, at(9, 0));
  first.finished_at = at(9, 0, 30);
  auto second = run(2, RunStatus::failed, Trigger::retry, at(9, 1, 30), 2);
  second.finished_at = at(9, 1, 40);
  auto third = run(3, RunStatus::succeeded, Trigger::retry, at(10, 0), 3);
  auto facts = explain(task, at(9, 0), {.runs = {first, second, third}}, at(10, 30));
  const auto* retry = find(facts, "retry");
  REQUIRE(retry);
  CHECK(value_of<std::int64_t>(*retry, "rung") == 1);
  CHECK(value_of<Millis>(*retry, "retry_delay") == 1min);
  const auto* yielded = find(facts, "yielded");
  REQUIRE(yielded);
  CHECK(value_of<std::int64_t>(*yielded, "attempt_no") == 3);
  CHECK(value_of<Millis>(*yielded, "retry_delay") == 50min);
  CHECK(value_of<Time>(*yielded, "ladder_at") == at(9, 51, 40));
  CHECK(yielded->text.find("run past that slot within its timebox of 30m") != std::string::npos);
}

TEST_CASE("a failure with no rung left says the task was disabled, or kept its plan") {
  auto task = hourly();
  task.definition.retry = {};
  task.definition.disable_when_exhausted = true;
  auto facts = explain(task, at(9, 0), {.runs = {run(1, RunStatus::failed, Trigger::schedule, at(9, 0))}}, at(9, 30));
  REQUIRE(find(facts, "ladder_exhausted"));
  CHECK(find(facts, "ladder_exhausted")->text.find("the task was disabled") != std::string::npos);
  task.definition.disable_when_exhausted = false;
  facts = explain(task, at(9, 0), {.runs = {run(1, RunStatus::failed, Trigger::schedule, at(9, 0))}}, at(9, 30));
  REQUIRE(find(facts, "ladder_exhausted"));
  CHECK(find(facts, "ladder_exhausted")->text.find("the task kept its plan: its next planned slot runs") !=
        std::string::npos);
  task.definition.retry = {60s};
  facts = explain(task, at(9, 0), {.runs = {run(1, RunStatus::failed, Trigger::schedule, at(9, 0))}}, at(9, 30));
  CHECK_FALSE(find(facts, "ladder_exhausted"));
}

TEST_CASE("a dropped run quotes the drop rule's numbers") {
  auto dropped = run(4, RunStatus::dropped, Trigger::schedule, at(9, 0));
  dropped.reason = "dropped: started 10m ago, sooner than interval 1h - tolerance 6m (last run 2026-11-21T08:50:00Z)";
  auto facts = explain(hourly(), at(9, 0), {.runs = {dropped}}, at(9, 30));
  REQUIRE(find(facts, "dropped"));
  CHECK(find(facts, "dropped")->text.find("sooner than interval 1h - tolerance 6m") != std::string::npos);
}

TEST_CASE("a slot inside a SKIPPED span is told by that span, one after it is not") {
  auto task = hourly();
  auto schedule = schedule_for(task);
  TaskState state;
  state.accounted_until = at(5, 0);
  state.next_run_at = at(6, 0);
  // The reason as the policy writes it: the slots 06:00 to 08:00, missed.
  auto enqueued = on_enqueue(task.definition, schedule, state, at(9, 0, 1), false);
  REQUIRE(enqueued.skipped);
  CHECK(last_skipped_slot(enqueued.skipped->reason) == at(8, 0));
  auto skipped = run(3, RunStatus::skipped, Trigger::schedule, at(6, 0));
  skipped.reason = enqueued.skipped->reason;
  auto facts = explain(task, at(7, 0), {.newest_planned_before = skipped}, at(10, 0));
  REQUIRE(find(facts, "skipped"));
  CHECK(find(facts, "skipped")->text.find("missed while no scheduler ran") != std::string::npos);
  task.state.accounted_until = at(9, 0);
  CHECK(last_skipped_slot("slot 2026-11-21T06:00:00Z skipped: the task was paused") == at(6, 0));
  skipped.reason = "slot 2026-11-21T06:00:00Z skipped: the task was paused";
  facts = explain(task, at(7, 0), {.newest_planned_before = skipped, .oldest_kept_slot = at(6, 0)}, at(10, 0));
  CHECK_FALSE(find(facts, "skipped"));
  CHECK(find(facts, "unrecorded"));
}

TEST_CASE("a past slot without a row: not handled yet, before the task, or before the history kept") {
  auto task = hourly();
  task.state.accounted_until = at(9, 0);
  auto facts = explain(task, at(10, 0), {}, at(10, 5));
  REQUIRE(find(facts, "pending"));
  REQUIRE(find(facts, "scheduler"));
  CHECK_FALSE(value_of<bool>(*find(facts, "scheduler"), "scheduler_running"));
  facts = explain(task, at(3, 0), {.oldest_kept_slot = at(2, 0), .created_at = at(4, 0)}, at(10, 5));
  CHECK(find(facts, "before_created"));
  facts = explain(task, at(3, 0), {.oldest_kept_slot = at(5, 0), .created_at = at(1, 0)}, at(10, 5));
  REQUIRE(find(facts, "before_history"));
  CHECK(find(facts, "before_history")->text.find("the oldest run kept is of 2026-11-21T05:00:00Z") != std::string::npos);
}

TEST_CASE("a future slot is not due; with jitter its start is told when it is the next run") {
  auto task = hourly();
  task.definition.jitter = 600s;
  task.state.next_run_at = at(11, 0);
  auto facts = explain(task, at(11, 0), {}, at(10, 30));
  REQUIRE(find(facts, "not_due"));
  CHECK(value_of<Time>(*find(facts, "not_due"), "starts_at") ==
        at(11, 0) + jitter_delay(task.definition, task.state.run_index + 1));
}

TEST_CASE("the next run: planned, a retry, a retry waiting for the plan, paused, disabled, overdue") {
  auto task = hourly();
  auto schedule = schedule_for(task);
  task.state.next_run_at = at(11, 0);
  auto next = explain_next(task, schedule, {}, at(10, 30));
  REQUIRE(find(next, "next"));
  CHECK(value_of<std::string>(*find(next, "next"), "next_kind") == "planned");

  task.state.attempt_no = 1;
  task.state.last_status = RunStatus::failed;
  task.state.last_finished_at = at(10, 29);
  task.state.next_run_at = at(10, 30);
  next = explain_next(task, schedule, {}, at(10, 29, 30));
  CHECK(value_of<std::string>(*find(next, "next"), "next_kind") == "retry");
  CHECK(value_of<std::int64_t>(*find(next, "next"), "attempt_no") == 2);

  task.state.attempt_no = 2;
  task.state.next_run_at = at(11, 0);
  next = explain_next(task, schedule, {}, at(10, 30));
  CHECK(value_of<std::string>(*find(next, "next"), "next_kind") == "retry_at_slot");

  task.state.paused = true;
  CHECK(find(explain_next(task, schedule, {}, at(10, 30)), "paused"));
  task.state.paused = false;

  next = explain_next(task, schedule, {}, at(11, 30));
  CHECK(find(next, "overdue"));
  CHECK(find(next, "scheduler"));

  task.state.disabled_until_update = true;
  task.state.disabled_reason = "Cannot run report after 3 attempt(s): exit code 1";
  next = explain_next(task, schedule, {}, at(10, 30));
  REQUIRE(next.size() == 1);
  CHECK(next[0].kind == "disabled");
  CHECK(next[0].text.find("exit code 1") != std::string::npos);
}

TEST_CASE("a task without planned slots explains its latest run") {
  auto task = hourly();
  task.definition.schedule_kind = ScheduleKind::manual;
  auto triggered = run(9, RunStatus::succeeded, Trigger::manual, at(9, 10));
  auto facts = explain_run_at(task, Manual{}, triggered, {}, at(10, 0));
  CHECK(find(facts, "no_slots"));
  CHECK(find(facts, "triggered"));
  CHECK(find(facts, "succeeded"));
  facts = explain_run_at(task, Manual{}, std::nullopt, {}, at(10, 0));
  CHECK(find(facts, "no_run"));
}

TEST_CASE("the chain: what starts the task and which tasks it starts") {
  TaskDefinition definition;
  definition.name = "load";
  definition.after = {"extract", false};
  std::vector<std::pair<std::string, Upstream>> followers{{"report", {"load", false}}, {"cleanup", {"load", true}}};
  auto facts = explain_chain(definition, followers);
  REQUIRE(find(facts, "upstream"));
  CHECK(value_of<std::string>(*find(facts, "upstream"), "upstream") == "extract");
  REQUIRE(find(facts, "followers"));
  CHECK(value_of<std::vector<std::string>>(*find(facts, "followers"), "followers") ==
        std::vector<std::string>{"report", "cleanup"});
  CHECK(find(facts, "followers")->text.find("cleanup (whatever the outcome)") != std::string::npos);
  CHECK(explain_chain(TaskDefinition{}, {}).empty());
}

TEST_CASE("a run queued by the upstream, and its retry by the ladder, name the upstream run") {
  auto task = hourly();
  task.definition.after = {"extract", false};
  auto chained = run(5, RunStatus::failed, Trigger::manual, at(9, 10));
  chained.upstream_run_id = 4;
  auto retry = run(6, RunStatus::succeeded, Trigger::manual, at(9, 10), 2);
  retry.enqueued_at = at(9, 11);
  retry.upstream_run_id = 4;
  auto facts = explain_slot(task, schedule_for(task), at(9, 0), {.runs = {chained, retry}}, {}, at(9, 30));
  std::vector<const Fact*> told;
  for (const auto& fact : facts)
    if (fact.kind == "chained") told.push_back(&fact);
  REQUIRE(told.size() == 2);
  CHECK(value_of<std::int64_t>(*told[0], "upstream_run_id") == 4);
  CHECK(told[0]->text.find("by run 4 of extract") != std::string::npos);
  CHECK(told[1]->text.find("attempt 2, a retry by the ladder") != std::string::npos);
}

TEST_CASE("a slot the DST rules shaped says which rule applied") {
  TaskDefinition definition;
  definition.name = "berlin";
  definition.schedule_kind = ScheduleKind::cron;
  definition.schedule_spec = "30 2 * * *";
  definition.tz = "Europe/Berlin";
  auto schedule = schedule_of(definition).value();
  // 2026-03-29: 02:30 does not exist in Berlin; cronie runs it at 03:00 CEST.
  auto slot = next_slot_after(schedule, Time{std::chrono::sys_days{std::chrono::year{2026} / 3 / 29}});
  REQUIRE(slot);
  auto fact = explain_dst(schedule, *slot);
  REQUIRE(fact);
  CHECK(value_of<std::string>(*fact, "dst_rule") == "--dst-gap run-after");
  CHECK(value_of<bool>(*fact, "dst_rule_by_default"));
  CHECK_FALSE(explain_dst(schedule, *slot + std::chrono::days{1} - 1h));
}
