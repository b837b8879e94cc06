#include <doctest/doctest.h>

#include "core/defaults.hpp"
#include "test_helpers.hpp"

using namespace taskd::core;
using taskd::test::at;
using namespace std::chrono_literals;

namespace {

Task task_on(ScheduleKind kind, std::string spec, std::string tz, std::vector<std::string> from_defaults) {
  Task task;
  auto& d = task.definition;
  d.name = "report";
  d.schedule_kind = kind;
  d.schedule_spec = std::move(spec);
  d.tz = std::move(tz);
  d.retry = default_retry_ladder();
  d.from_defaults = std::move(from_defaults);
  task.schedule = schedule_of(d).value();
  return task;
}

}  // namespace

TEST_CASE("a task takes the defaults of the fields it leaves to them, and taskd's own where none is set") {
  auto task = task_on(ScheduleKind::every, "1h", "", {"timeout", "retry", "notify", "keep_runs"});
  task.definition.timeout = 5min;
  task.definition.keep_runs = 3;
  REQUIRE(take_defaults(task, {{"retry", "1m,10m"}, {"notify", "mail-me"}}, at(12, 0)));
  const auto& d = task.definition;
  CHECK(d.retry == std::vector<Seconds>{1min, 10min});
  CHECK(d.notify == "mail-me");
  CHECK_FALSE(d.timeout.has_value());  // taskd's own: half the interval
  CHECK(d.keep_runs == 1000);
  // In defaultable_fields()'s order, whatever order they came in.
  CHECK(d.from_defaults == std::vector<std::string>{"notify", "retry", "timeout", "keep_runs"});
}

TEST_CASE("a field the task sets itself is not touched") {
  auto task = task_on(ScheduleKind::every, "1h", "", {"notify"});
  task.definition.timeout = 5min;
  REQUIRE(take_defaults(task, {{"timeout", "1m"}, {"notify", "x"}}, at(12, 0)));
  CHECK(task.definition.timeout == 5min);
  CHECK(task.definition.notify == "x");
}

TEST_CASE("a zone goes only to a wall-clock schedule, whose schedule is parsed again; without one it stays") {
  auto cron = task_on(ScheduleKind::cron, "0 3 * * *", "UTC", {"tz"});
  REQUIRE(take_defaults(cron, {{"tz", "Asia/Tokyo"}}, at(12, 0)));
  CHECK(cron.definition.tz == "Asia/Tokyo");
  CHECK(next_slot_after(*cron.schedule, at(12, 0)) == at(18, 0));  // 03:00 in Tokyo is 18:00 UTC
  REQUIRE(take_defaults(cron, {}, at(12, 0)));
  CHECK(cron.definition.tz == "Asia/Tokyo");

  auto every = task_on(ScheduleKind::every, "1h", "", {"tz", "notify"});
  REQUIRE(take_defaults(every, {{"tz", "Asia/Tokyo"}}, at(12, 0)));
  CHECK(every.definition.tz.empty());
  CHECK(every.definition.from_defaults == std::vector<std::string>{"notify"});
}

TEST_CASE("a default that does not parse names the task and the option") {
  auto task = task_on(ScheduleKind::every, "1h", "", {"keep_runs"});
  auto taken = take_defaults(task, {{"keep_runs", "0"}}, at(12, 0));
  REQUIRE_FALSE(taken);
  CHECK(taken.error().message.find("task \"report\"") != std::string::npos);
  CHECK(taken.error().message.find("--keep-runs") != std::string::npos);
  CHECK_FALSE(check_default("retry", "5m,1m"));
  CHECK(check_default("retry", "none"));
  CHECK(check_default("kill_grace", "1s").error().kind == ErrorKind::usage);
}

TEST_CASE("from_defaults is stored as a comma list and read back; an unknown field is an error") {
  CHECK(from_defaults_text({"notify", "tz"}) == "notify,tz");
  CHECK(parse_from_defaults("notify,tz").value() == std::vector<std::string>{"notify", "tz"});
  CHECK(parse_from_defaults("").value().empty());
  CHECK_FALSE(parse_from_defaults("notify,kill_grace"));
}

TEST_CASE("a from_defaults list read again (kept from the last reads) is the same list, or the same error") {
  for (int read = 0; read < 2; ++read) {
    CHECK(parse_from_defaults("retry,tz").value() == std::vector<std::string>{"retry", "tz"});
    CHECK(parse_from_defaults("retry,owner").error().message == "\"owner\" is not a field that has a default");
    CHECK(parse_from_defaults("retry").value() == std::vector<std::string>{"retry"});
  }
}
