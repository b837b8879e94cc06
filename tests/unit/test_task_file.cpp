#include <doctest/doctest.h>

#include "cli/task_file.hpp"
#include "ops/task_diff.hpp"
#include "cli/task_file_write.hpp"
#include "test_helpers.hpp"

using namespace taskd;
using namespace taskd::cli;
using namespace taskd::ops;
using taskd::test::at;

namespace {

const std::filesystem::path file_path = "/srv/tasks.toml";

TaskFile parsed(std::string_view text) {
  auto file = parse_task_file(text, file_path);
  REQUIRE_MESSAGE(file, (file ? "" : file.error().message));
  return *file;
}

std::string parse_error(std::string_view text) {
  auto file = parse_task_file(text, file_path);
  REQUIRE_FALSE(file);
  CHECK(file.error().kind == core::ErrorKind::bad_input);
  return file.error().message;
}

core::TaskDefinition definition_of(const FileTask& task) {
  auto built = build_file_task(task, at(14, 0));
  REQUIRE_MESSAGE(built, (built ? "" : built.error().message));
  return built->definition;
}

}  // namespace

TEST_CASE("task file keys become the options of add") {
  auto file = parsed(R"(
[[task]]
name = "fetch"
command = ["curl", "-s", "https://example.org"]
every = "5m"
phase = "1m"
after_finish = true
jitter = "10s"
timeout = "2m"
kill_grace = "5s"
tolerance = "30s"
retry = ["10s", "1m"]
permanent_exit = [64, 78]
overlap = "queue"
env = { LANG = "C", TOKEN = "a=b" }
cwd = "data"
group = "net"
priority = 3
start_now = true
)");
  REQUIRE(file.tasks.size() == 1);
  const auto& task = file.tasks.front();
  CHECK(task.options.command == std::vector<std::string>{"curl", "-s", "https://example.org"});
  CHECK_FALSE(task.options.shell);
  CHECK(task.options.schedule.every == "5m");
  CHECK(task.options.schedule.after_finish);
  CHECK(task.options.retry == "10s,1m");
  CHECK(task.options.permanent_exit == "64,78");
  CHECK(task.options.env == std::vector<std::string>{"LANG=C", "TOKEN=a=b"});
  CHECK(task.options.cwd == "/srv/data");
  CHECK(task.options.field("owner") == "/srv/tasks.toml");
  CHECK(task.start_now);
  CHECK(task.where == "/srv/tasks.toml:2:1");
  auto d = definition_of(task);
  CHECK(d.phase == core::Seconds{60});
  CHECK(d.retry == std::vector<core::Seconds>{core::Seconds{10}, core::Seconds{60}});
  CHECK(d.permanent_exit == std::vector<int>{64, 78});
  CHECK(d.overlap == core::Overlap::queue);
  CHECK(d.priority == 3);
}

TEST_CASE("a command string is a line for /bin/sh -c; empty lists turn retries and permanent exits off") {
  auto file = parsed(R"(
[[task]]
name = "report"
command = "make report | mail -s report me"
cron = "0 7 * * MON"
tz = "Europe/Berlin"
retry = []
permanent_exit = []
)");
  auto d = definition_of(file.tasks.front());
  CHECK(d.command.shell);
  CHECK(d.command.argv == std::vector<std::string>{"make report | mail -s report me"});
  CHECK(d.retry.empty());
  CHECK(d.permanent_exit.empty());
  CHECK(d.tz == "Europe/Berlin");
}

TEST_CASE("[defaults] fill what a task leaves out; a task's own schedule wins over a default one") {
  auto file = parsed(R"(
[defaults]
every = "1h"
timeout = "5m"
owner = "ops"

[[task]]
name = "a"
command = ["true"]

[[task]]
name = "b"
command = ["true"]
cron = "*/5 * * * *"
timeout = "1m"
)");
  CHECK(file.owner == "ops");
  REQUIRE(file.tasks.size() == 2);
  CHECK(file.tasks[0].options.schedule.every == "1h");
  CHECK(file.tasks[0].options.field("timeout") == "5m");
  CHECK(file.tasks[0].options.field("owner") == "ops");
  CHECK(file.tasks[1].options.schedule.every.empty());
  CHECK(file.tasks[1].options.field("timeout") == "1m");
  definition_of(file.tasks[1]);
}

TEST_CASE("[group.NAME] sets a concurrency cap") {
  auto file = parsed("[group.net]\nconcurrency = 2\n[group.\"db.main\"]\nconcurrency = 1\n");
  CHECK(file.group_caps == std::map<std::string, int>{{"db.main", 1}, {"net", 2}});
  CHECK(
      parse_error("[group.net]\nconcurrency = 0\n").starts_with("/srv/tasks.toml:1:1: [group.net] needs concurrency"));
  CHECK(parse_error("[group.net]\ncap = 2\n") ==
        "/srv/tasks.toml:2:1: unknown key \"cap\" in [group.net] (only concurrency)");
}

TEST_CASE("task file errors say file, line and column, and which task") {
  CHECK(parse_error("[[task]]\nname = \"fetch\"\ncommand = [\"true\"]\n  intervl = \"5m\"\n") ==
        "/srv/tasks.toml:4:3: unknown key \"intervl\" in task \"fetch\"");
  CHECK(parse_error("[[task]]\nname = \"fetch\"\ncommand = [\"true\"]\ntimeout = 30\n") ==
        "/srv/tasks.toml:4:11: task \"fetch\": timeout: expected a string");
  CHECK(parse_error("[defaults]\nintervl = \"5m\"\n") == "/srv/tasks.toml:2:1: unknown key \"intervl\" in [defaults]");
  CHECK(parse_error("[defaults]\nname = \"x\"\n").starts_with("/srv/tasks.toml:2:1: [defaults] cannot give a name"));
  CHECK(parse_error("[[task]]\ncommand = [\"true\"]\n").starts_with("/srv/tasks.toml:1:1: a task without a name"));
  CHECK(parse_error("[[task]]\nname = \"x\"\nevery = \"5m\"\n")
            .starts_with("/srv/tasks.toml:1:1: task \"x\" has no command"));
  CHECK(parse_error("[[task]]\nname = \"x\"\ncommand = [\"a\"]\n[[task]]\nname = \"x\"\ncommand = [\"b\"]\n") ==
        "/srv/tasks.toml:4:1: task \"x\" is already listed at /srv/tasks.toml:1:1");
  CHECK(parse_error("[task]\nname = \"x\"\n").starts_with("/srv/tasks.toml:1:1: task: expected [[task]] tables"));
  CHECK(parse_error("tasks = 1\n") ==
        "/srv/tasks.toml:1:1: unknown key \"tasks\" (expected [[task]], [[calendar]], [defaults] or [group.NAME])");
  CHECK(parse_error("[[task]\n").starts_with("/srv/tasks.toml:1:"));
}

TEST_CASE("add's checks apply, pointed at the key that failed them") {
  auto file = parsed(R"([[task]]
name = "fetch"
command = ["true"]
every = "5m"
kill_grace = "soon"
)");
  auto definition = build_file_task(file.tasks.front(), at(14, 0));
  REQUIRE_FALSE(definition);
  CHECK(definition.error().kind == core::ErrorKind::bad_input);
  CHECK(definition.error().message.starts_with("/srv/tasks.toml:5:14: task \"fetch\": --kill-grace: "));

  auto two_schedules = parsed("[[task]]\nname = \"x\"\ncommand = [\"true\"]\nevery = \"5m\"\ncron = \"* * * * *\"\n");
  auto both = build_file_task(two_schedules.tasks.front(), at(14, 0));
  REQUIRE_FALSE(both);
  CHECK(both.error().kind == core::ErrorKind::bad_input);
  CHECK(both.error().message.starts_with("/srv/tasks.toml:1:1: task \"x\": give exactly one schedule"));
}

TEST_CASE("limits are numbers or strings as add takes them, and a bad one is pointed at") {
  const std::string head = "[[task]]\nname = \"x\"\ncommand = [\"true\"]\nevery = \"1h\"\n";
  auto text_limits = parsed(head + "memory_max = \"512M\"\ncpu_weight = 50\ntasks_max = \"max\"\n");
  CHECK(definition_of(text_limits.tasks.front()).limits ==
        core::ResourceLimits{.memory_max = 512LL << 20, .cpu_weight = 50, .tasks_max = std::nullopt});
  auto number_limits = parsed(head + "memory_max = 1048576\ntasks_max = 64\n");
  CHECK(definition_of(number_limits.tasks.front()).limits ==
        core::ResourceLimits{.memory_max = 1LL << 20, .cpu_weight = std::nullopt, .tasks_max = 64});

  CHECK(parse_error(head + "cpu_weight = true\n")
            .starts_with("/srv/tasks.toml:5:14: task \"x\": cpu_weight: expected a whole number or a string"));
  auto zero = parsed(head + "tasks_max = 0\n");
  auto refused = build_file_task(zero.tasks.front(), at(14, 0));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == core::ErrorKind::bad_input);
  CHECK(refused.error().message.starts_with("/srv/tasks.toml:5:13: task \"x\": --tasks-max \"0\": "));
}

TEST_CASE("changed fields are named as in --json") {
  core::TaskDefinition before;
  before.name = "x";
  before.schedule_spec = "5m";
  auto after = before;
  CHECK(changed_fields(before, after).empty());
  after.schedule_spec = "10m";
  after.env = {{"A", "1"}};
  after.kill_grace = core::Seconds{3};
  CHECK(changed_fields(before, after) == std::vector<std::string>{"schedule", "kill_grace", "env"});
  after = before;
  after.limits.cpu_weight = 200;
  after.limits.tasks_max = 10;
  CHECK(changed_fields(before, after) == std::vector<std::string>{"cpu_weight", "tasks_max"});
}

TEST_CASE("a written task file reads back to the same definitions") {
  auto file = parsed(R"(
[group.net]
concurrency = 2

[group."db.main:1"]
concurrency = 1

[[task]]
name = "fetch"
command = ["printf", "%s\n", "it's \"quoted\"", "", "line\nbreak"]
every = "5m"
phase = "1m"
jitter = "10s"
retry = ["10s", "1m"]
permanent_exit = [64]
overlap = "replace"
env = { "LANG" = "C", B = "x y" }
cwd = "/tmp"
owner = ""
group = "net"
priority = -2
memory_max = "1536K"
cpu_weight = 300
tasks_max = 100

[[task]]
name = "weekly"
command = "echo '''odd''' \\ done"
rrule = "FREQ=WEEKLY;BYDAY=MO"
tz = "America/New_York"
dtstart = "2026-01-05T09:30:00"
timeout = "1h"
tolerance = "5m"
kill_grace = "1m"
after_finish = false
)");
  std::vector<core::TaskDefinition> definitions;
  for (const auto& task : file.tasks) definitions.push_back(definition_of(task));
  core::TaskDefinition odd = definitions.front();
  odd.name = "odd";
  odd.command = {{"\nstarts with a newline", "tab\tand \x01 and \\ and \"", "'''"}, false};
  odd.env = {{"Z", "\nz"}, {"A", "'a'"}};
  definitions.push_back(odd);
  auto text = write_task_file(definitions, file.group_caps);
  auto again = parsed(text);
  CHECK(again.group_caps == file.group_caps);
  REQUIRE(again.tasks.size() == definitions.size());
  for (std::size_t i = 0; i < definitions.size(); ++i) {
    INFO(text);
    CHECK(definition_of(again.tasks[i]) == definitions[i]);
  }
}

TEST_CASE("[[calendar]] tables give calendars, their days the lines of a dates file, and read back as written") {
  auto file = parsed(R"(
[[calendar]]
name = "de-holidays"
dates = ["2026-12-26 Zweiter Weihnachtstag", "2026-12-25 Erster \"Weihnachtstag\"", "2026-12-25 \\ und\tmehr",
         "2027-01-01"]

[[calendar]]
name = "none"
dates = []
)");
  REQUIRE(file.calendars.size() == 2);
  const auto& holidays = file.calendars[0];
  CHECK(holidays.name == "de-holidays");
  CHECK(holidays.where == "/srv/tasks.toml:2:1");
  auto day = [](int y, unsigned m, unsigned d) { return date::local_days{date::year{y} / m / d}; };
  CHECK(holidays.dates == std::vector<core::CalendarDate>{{day(2026, 12, 25), "Erster \"Weihnachtstag\"; \\ und\tmehr"},
                                                         {day(2026, 12, 26), "Zweiter Weihnachtstag"},
                                                         {day(2027, 1, 1), ""}});
  CHECK(file.calendars[1].dates.empty());

  std::string written;
  write_calendar(written, holidays.name, holidays.dates);
  auto again = parsed(written);
  REQUIRE(again.calendars.size() == 1);
  CHECK(again.calendars[0].name == holidays.name);
  CHECK(again.calendars[0].dates == holidays.dates);
}

TEST_CASE("a bad [[calendar]] table is named with its line and column") {
  CHECK(parse_error("[[calendar]]\nname = \"x\"\ndates = [\"2026-12-25\", \"25.12.2026\"]\n") ==
        "/srv/tasks.toml:3:24: calendar \"x\": dates: \"25.12.2026\" does not start with a day (YYYY-MM-DD, then its "
        "name if any)");
  CHECK(parse_error("[[calendar]]\nname = \"x\"\ndates = [\"2026-12-25 a\\u0001b\"]\n") ==
        "/srv/tasks.toml:3:10: calendar \"x\": dates: the day's name has a control character");
  CHECK(parse_error("[[calendar]]\nname = \"x\"\n") ==
        "/srv/tasks.toml:1:1: calendar \"x\" has no dates (dates = [\"YYYY-MM-DD name\", …])");
  CHECK(parse_error("[[calendar]]\ndates = []\n") == "/srv/tasks.toml:1:1: a calendar without a name (name = \"…\")");
  CHECK(parse_error("[[calendar]]\nname = \"x\"\ndates = []\nyear = 2026\n") ==
        "/srv/tasks.toml:4:1: unknown key \"year\" in calendar \"x\" (name, dates)");
  CHECK(parse_error("calendar = 3\n") == "/srv/tasks.toml:1:12: calendar: expected [[calendar]] tables");
  CHECK(parse_error("[[calendar]]\nname = \"a b\"\ndates = []\n").starts_with("/srv/tasks.toml:2:8: calendar: "));
  CHECK(parse_error("[[calendar]]\nname = \"x\"\ndates = []\n[[calendar]]\nname = \"x\"\ndates = []\n") ==
        "/srv/tasks.toml:4:1: calendar \"x\" is already listed at /srv/tasks.toml:1:1");
}
