#include <doctest/doctest.h>

#include <map>

#include "core/notify.hpp"
#include "core/policy.hpp"
#include "test_helpers.hpp"

using namespace taskd::core;
using taskd::test::at;
using namespace std::chrono_literals;

namespace {

// A task every 10 minutes with a ladder of two retries, walked attempt by
// attempt through the real policy.
struct Walk {
  TaskDefinition definition;
  TaskState state;
  Time now = at(10, 0);

  Walk() {
    definition.name = "fetch";
    definition.schedule_spec = "10m";
    definition.retry = {0s, 60s};
  }

  std::optional<NotifyEvent> attempt(AttemptOutcome outcome) {
    auto schedule = schedule_of(definition).value();
    auto started = on_start(definition, schedule, state, now, now, "uid").state;
    now += 1s;
    auto finished = on_finish(definition, schedule, started, now, outcome, "exit code 1").state;
    auto change = state_change(started, finished);
    state = finished;
    now += 10min;
    return change;
  }
};

}  // namespace

TEST_CASE("a notification for the first failure, none for the retries that also fail, one for the recovery") {
  Walk walk;
  CHECK(walk.attempt(AttemptOutcome::succeeded) == std::nullopt);
  CHECK(walk.attempt(AttemptOutcome::failed) == NotifyEvent::failed);
  CHECK(walk.attempt(AttemptOutcome::timed_out) == std::nullopt);
  CHECK(walk.attempt(AttemptOutcome::succeeded) == NotifyEvent::recovered);
  CHECK(walk.attempt(AttemptOutcome::succeeded) == std::nullopt);
}

TEST_CASE("a task disabled by its attempt gets one notification: disabled") {
  Walk walk;
  CHECK(walk.attempt(AttemptOutcome::permanent_failure) == NotifyEvent::disabled);

  Walk ladder;
  ladder.definition.disable_when_exhausted = true;
  CHECK(ladder.attempt(AttemptOutcome::failed) == NotifyEvent::failed);
  CHECK(ladder.attempt(AttemptOutcome::lost) == std::nullopt);
  CHECK(ladder.attempt(AttemptOutcome::failed) == NotifyEvent::disabled);  // the ladder ran out
  CHECK(ladder.state.disabled_until_update);
}

TEST_CASE("a task whose ladder runs out is told once: exhausted, not when the ladders of its later slots run out") {
  Walk walk;
  CHECK(walk.attempt(AttemptOutcome::failed) == NotifyEvent::failed);
  CHECK(walk.attempt(AttemptOutcome::failed) == std::nullopt);
  CHECK(walk.attempt(AttemptOutcome::failed) == NotifyEvent::exhausted);  // the ladder ran out
  CHECK_FALSE(walk.state.disabled_until_update);
  for (int attempt = 0; attempt < 6; ++attempt) {
    CAPTURE(attempt);
    CHECK(walk.attempt(AttemptOutcome::failed) == std::nullopt);  // two more ladders walked and run out
  }
  CHECK(walk.attempt(AttemptOutcome::succeeded) == NotifyEvent::recovered);
  CHECK(walk.attempt(AttemptOutcome::failed) == NotifyEvent::failed);  // a new streak

  Walk no_retries;
  no_retries.definition.retry = {};
  CHECK(no_retries.attempt(AttemptOutcome::failed) == NotifyEvent::exhausted);  // failed and ran out: one
  CHECK(no_retries.attempt(AttemptOutcome::failed) == std::nullopt);
  CHECK(to_string(NotifyEvent::exhausted) == "exhausted");
}

TEST_CASE("the notify command's variables carry the facts, empty when there are none") {
  NotifyFacts facts{.event = NotifyEvent::disabled,
                    .task = "fetch",
                    .run_id = 42,
                    .status = RunStatus::failed,
                    .exit_code = 78,
                    .signal = std::nullopt,
                    .reason = "Provided URL is invalid: http://x",
                    .disabled_reason = "Cannot run fetch: Provided URL is invalid: http://x",
                    .attempt_no = 1,
                    .at = at(10, 0, 1)};
  std::map<std::string, std::string> variables;
  for (const auto& [name, value] : notify_variables(facts)) variables[name] = value;
  CHECK(variables["TASKD_NOTIFY"] == "disabled");
  CHECK(variables["TASKD_TASK"] == "fetch");
  CHECK(variables["TASKD_RUN_ID"] == "42");
  CHECK(variables["TASKD_RUN_STATUS"] == "failed");
  CHECK(variables["TASKD_EXIT_CODE"] == "78");
  CHECK(variables["TASKD_SIGNAL"] == "");
  CHECK(variables["TASKD_REASON"] == "Provided URL is invalid: http://x");
  CHECK(variables["TASKD_DISABLED_REASON"] == "Cannot run fetch: Provided URL is invalid: http://x");
  CHECK(variables["TASKD_ATTEMPT_NO"] == "1");
  CHECK(variables["TASKD_FINISHED_AT"] == format_rfc3339(at(10, 0, 1)));
}
