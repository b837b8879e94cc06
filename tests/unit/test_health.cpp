#include <doctest/doctest.h>

#include "core/health.hpp"
#include "test_helpers.hpp"

using namespace taskd::core;
using taskd::test::at;
using namespace std::chrono_literals;

namespace {

TaskFacts task(std::string name) {
  TaskFacts facts;
  facts.name = std::move(name);
  facts.created_at = at(8, 0);
  return facts;
}

const SchedulerFacts running{at(14, 0), 0};

CheckReport check_report(const std::vector<TaskFacts>& tasks, const SchedulerFacts& scheduler, Time now,
                         std::optional<Millis> late) {
  CheckReportBuilder builder(scheduler, now, late);
  for (const auto& task : tasks) builder.add(task);
  return std::move(builder).finish();
}

}  // namespace

TEST_CASE("verdicts exit as monitoring plugins do: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN") {
  CHECK(exit_code(Verdict::ok) == 0);
  CHECK(exit_code(Verdict::warning) == 1);
  CHECK(exit_code(Verdict::critical) == 2);
  CHECK(exit_code(Verdict::unknown) == 3);
}

TEST_CASE("a task without alert_after or --late is well whatever its history") {
  auto report = check_report({task("a"), task("b")}, running, at(14, 0), std::nullopt);
  CHECK(report.verdict == Verdict::ok);
  CHECK(report.problems.empty());
  CHECK(summary_line(report) == "TASKD OK - 2 tasks ok | ok=2 warning=0 critical=0 paused=0");
}

TEST_CASE("a disabled task is critical with its reason") {
  auto backup = task("backup");
  backup.disabled = true;
  backup.disabled_reason = "Cannot run backup after 7 attempt(s): exit 1";
  auto problems = task_problems(backup, at(14, 0), 5min);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].verdict == Verdict::critical);
  CHECK(problems[0].kind == HealthProblemKind::disabled);
  CHECK(detail_line(problems[0]) == "CRITICAL backup: disabled: Cannot run backup after 7 attempt(s): exit 1");
}

TEST_CASE("a paused task is not judged, disabled or silent as it may be") {
  auto paused = task("p");
  paused.paused = true;
  paused.disabled = true;
  paused.alert_after = 1h;
  CHECK(task_problems(paused, at(14, 0), 1s).empty());
  auto report = check_report({paused, task("q")}, running, at(14, 0), std::nullopt);
  CHECK(report.verdict == Verdict::ok);
  CHECK(summary_line(report) == "TASKD OK - 1 task ok, 1 paused | ok=1 warning=0 critical=0 paused=1");
}

TEST_CASE("a task whose row is malformed is critical with what is wrong, paused or not") {
  auto damaged = task("backup");
  damaged.paused = true;
  damaged.malformed = "env: not a JSON array of [name, value] pairs of strings: \"{\"";
  auto problems = task_problems(damaged, at(14, 0), std::nullopt);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].kind == HealthProblemKind::malformed);
  CHECK(detail_line(problems[0]) ==
        "CRITICAL backup: malformed in the database: env: not a JSON array of [name, value] pairs of strings: "
        "\"{\"");
  auto report = check_report({damaged, task("q")}, running, at(14, 0), std::nullopt);
  CHECK(report.verdict == Verdict::critical);
  CHECK(summary_line(report) ==
        "TASKD CRITICAL - 1 task critical: backup | ok=1 warning=0 critical=1 paused=0");
}

TEST_CASE("alert_after counts from the last success, the limit itself still well") {
  auto report = task("report");
  report.alert_after = 1h;
  report.last_succeeded_at = at(13, 0);
  CHECK(task_problems(report, at(14, 0), std::nullopt).empty());
  auto problems = task_problems(report, at(14, 0) + 1ms, std::nullopt);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].kind == HealthProblemKind::no_success);
  CHECK(problems[0].since == at(13, 0));
  CHECK(problems[0].limit == Millis{1h});
  CHECK(problems[0].detail == "no success for 1h (alert after 1h; last success 2026-11-21T13:00:00Z)");
}

TEST_CASE("alert_after counts from the creation of a task that never succeeded") {
  auto fresh = task("fresh");
  fresh.alert_after = 6h;
  CHECK(task_problems(fresh, at(14, 0), std::nullopt).empty());  // added at 08:00
  auto problems = task_problems(fresh, at(14, 30), std::nullopt);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].detail == "never succeeded in the 6h30m since it was added 2026-11-21T08:00:00Z (alert after 6h)");
}

TEST_CASE("a run that started later than --late is a warning, one just in time is not") {
  auto sync = task("sync");
  sync.run_not_before = at(13, 0);
  sync.run_started_at = at(13, 5);
  CHECK(task_problems(sync, at(14, 0), 5min).empty());
  CHECK(task_problems(sync, at(14, 0), std::nullopt).empty());
  auto problems = task_problems(sync, at(14, 0), 4min);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].verdict == Verdict::warning);
  CHECK(problems[0].age == Millis{5min});
  CHECK(problems[0].detail == "its last run started 5m late (due 2026-11-21T13:00:00Z; --late 4m)");
}

TEST_CASE("a run still queued is as late as it has waited") {
  auto sync = task("sync");
  sync.run_not_before = at(13, 50);
  CHECK(task_problems(sync, at(13, 55), 5min).empty());
  auto problems = task_problems(sync, at(14, 0), 5min);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].detail == "its run due 2026-11-21T13:50:00Z has waited 10m to start (--late 5m)");
}

TEST_CASE("a final failure is a warning; one with a retry to come, or of a run started by hand, is not") {
  auto failed = task("sync");
  failed.last_status = RunStatus::timed_out;
  failed.last_finished_at = at(13, 0);
  auto report = check_report({failed}, running, at(14, 0), std::nullopt);
  CHECK(report.verdict == Verdict::warning);
  REQUIRE(report.problems.size() == 1);
  CHECK(report.problems[0].kind == HealthProblemKind::failed);
  CHECK(report.problems[0].since == at(13, 0));
  CHECK(detail_line(report.problems[0]) ==
        "WARNING sync: its latest run ended timed_out 1h ago (2026-11-21T13:00:00Z), with no retry to come");
  CHECK(summary_line(report) == "TASKD WARNING - 1 task failed: sync | ok=0 warning=1 critical=0 paused=0");

  auto retrying = failed;
  retrying.retry_pending = true;
  auto by_hand = failed;
  by_hand.last_run_by_hand = true;
  auto succeeded = failed;
  succeeded.last_status = RunStatus::succeeded;
  CHECK(check_report({retrying, by_hand, succeeded}, running, at(14, 0), std::nullopt).verdict == Verdict::ok);
}

TEST_CASE("a task whose retries ran out is warned about until it succeeds, while its later slots retry too") {
  auto failing = task("poll");
  failing.last_status = RunStatus::failed;
  failing.last_finished_at = at(13, 0);
  failing.failing_since = at(9, 0);
  failing.ladder_exhausted_at = at(10, 0);
  failing.retry_pending = true;  // a later slot's ladder is being walked
  auto problems = task_problems(failing, at(14, 0), std::nullopt);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].verdict == Verdict::warning);
  CHECK(problems[0].detail ==
        "its latest run ended failed 1h ago (2026-11-21T13:00:00Z), a retry to come; failing since "
        "2026-11-21T09:00:00Z; its retries ran out at 2026-11-21T10:00:00Z");

  auto retrying = failing;
  retrying.ladder_exhausted_at.reset();
  CHECK(task_problems(retrying, at(14, 0), std::nullopt).empty());
}

TEST_CASE("no scheduler is critical only while tasks are overdue") {
  CHECK_FALSE(scheduler_problem({std::nullopt, 0}, at(14, 0)));
  CHECK_FALSE(scheduler_problem({at(13, 58), 3}, at(14, 0)));  // heartbeat exactly two minutes ago
  auto silent = scheduler_problem({at(13, 55), 3}, at(14, 0));
  REQUIRE(silent);
  CHECK(silent->verdict == Verdict::critical);
  CHECK(silent->detail ==
        "no scheduler (taskd run) has heartbeated for 5m (last 2026-11-21T13:55:00Z) while 3 tasks are due");
  auto none = scheduler_problem({std::nullopt, 1}, at(14, 0));
  REQUIRE(none);
  CHECK(none->detail == "no scheduler (taskd run) is registered while 1 task is due");
  CHECK(detail_line(*none) == "CRITICAL scheduler: no scheduler (taskd run) is registered while 1 task is due");
}

TEST_CASE("the summary names the scheduler, then the critical tasks, then the late ones") {
  auto backup = task("backup");
  backup.disabled = true;
  auto report = task("report");
  report.alert_after = 1h;
  auto sync = task("sync");
  sync.run_not_before = at(13, 0);
  auto all = check_report({backup, report, sync, task("well")}, {std::nullopt, 2}, at(14, 0), 1min);
  CHECK(all.verdict == Verdict::critical);
  CHECK(summary_line(all) ==
        "TASKD CRITICAL - no scheduler (taskd run) is registered while 2 tasks are due; 2 tasks critical: backup, "
        "report; 1 task late: sync | ok=1 warning=1 critical=2 paused=0");
  REQUIRE(all.problems.size() == 4);
  CHECK(all.problems.front().kind == HealthProblemKind::no_scheduler);
  CHECK(all.problems.back().verdict == Verdict::warning);

  auto late_only = check_report({sync}, running, at(14, 0), 1min);
  CHECK(late_only.verdict == Verdict::warning);
  CHECK(summary_line(late_only) == "TASKD WARNING - 1 task late: sync | ok=0 warning=1 critical=0 paused=0");
}

TEST_CASE("the summary names five tasks and counts the rest; no pipe gets into the text") {
  std::vector<TaskFacts> tasks;
  for (char c = 'a'; c <= 'g'; ++c) {
    auto disabled = task(std::string(1, c));
    disabled.disabled = true;
    disabled.disabled_reason = "exit 1 | grep failed";
    tasks.push_back(disabled);
  }
  auto report = check_report(tasks, running, at(14, 0), std::nullopt);
  CHECK(summary_line(report) ==
        "TASKD CRITICAL - 7 tasks critical: a, b, c, d, e and 2 more | ok=0 warning=0 critical=7 paused=0");
  CHECK(detail_line(report.problems.front()) == "CRITICAL a: disabled: exit 1 / grep failed");
}

TEST_CASE("alert_after does not count the days the task's schedule leaves out") {
  using date::local_days;
  auto report = task("report");
  report.alert_after = 24h;
  report.last_succeeded_at = at(13, 0) - 48h;
  const auto utc = find_zone("UTC").value();
  const local_days holiday{date::year{2026} / 11 / 20};
  auto off = [&](CalendarDays days) {
    return std::make_shared<const SlotChanges>(std::vector<SetDate>{}, std::vector<SetDate>{}, utc, days);
  };
  CHECK(task_problems(report, at(13, 0), std::nullopt).size() == 1);

  report.days_off = off({{holiday}, std::nullopt});
  CHECK(task_problems(report, at(13, 0), std::nullopt).empty());
  auto problems = task_problems(report, at(13, 0) + 1s, std::nullopt);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].age == Millis{24h + 1s});
  CHECK(problems[0].detail ==
        "no success for 2d1s (alert after 1d; last success 2026-11-19T13:00:00Z; 1d on days its schedule leaves "
        "out not counted)");

  // Kept days alone count: 11 h of 19 November since the success.
  report.days_off = off({{}, std::vector<local_days>{holiday - date::days{1}}});
  CHECK(task_problems(report, at(13, 0) + 72h, std::nullopt).empty());
  report.alert_after = 10h;
  CHECK(task_problems(report, at(13, 0), std::nullopt).size() == 1);
}
