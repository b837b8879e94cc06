#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/crontab.hpp"

using namespace taskd::core;

namespace {

Crontab parse(std::string_view text, CrontabFormat format = CrontabFormat::user) { return parse_crontab(text, format); }

CrontabEntry only_entry(std::string_view text, CrontabFormat format = CrontabFormat::user) {
  auto crontab = parse(text, format);
  INFO(text);
  REQUIRE(crontab.entries.size() == 1);
  CHECK(crontab.problems.empty());
  return crontab.entries.front();
}

CrontabProblem only_problem(std::string_view text, CrontabFormat format = CrontabFormat::user) {
  auto crontab = parse(text, format);
  INFO(text);
  REQUIRE(crontab.problems.size() == 1);
  return crontab.problems.front();
}

std::vector<std::string> names_of(std::string_view text) { return crontab_task_names(parse(text).entries); }

}  // namespace

TEST_CASE("a user crontab line is five time fields and a shell command") {
  auto entry = only_entry("5 0 * * *       $HOME/bin/daily.job >> $HOME/tmp/out 2>&1\n");
  CHECK(entry.line == 1);
  CHECK(entry.schedule == "5 0 * * *");
  CHECK(entry.command == "$HOME/bin/daily.job >> $HOME/tmp/out 2>&1");
  CHECK_FALSE(entry.input);
  CHECK(entry.user.empty());
  CHECK(entry.shell == "/bin/sh");
}

TEST_CASE("a system crontab line has a user field before the command") {
  auto entry = only_entry("17 *\t* * *\troot\tcd / && run-parts --report /etc/cron.hourly", CrontabFormat::system);
  CHECK(entry.schedule == "17 * * * *");
  CHECK(entry.user == "root");
  CHECK(entry.command == "cd / && run-parts --report /etc/cron.hourly");
}

TEST_CASE("a system crontab line's task runs as its user, unless that is the importing user") {
  auto nobody = only_entry("0 * * * * nobody id -u", CrontabFormat::system);
  CHECK(crontab_run_as(nobody, "root").value() == "nobody");
  CHECK(crontab_run_as(nobody, "nobody").value().empty());
  CHECK(crontab_run_as(only_entry("0 * * * * id -u"), "root").value().empty());
  for (auto field : {"www-data:adm", "-rf", "na\x1bme"}) {
    CAPTURE(field);
    auto run_as = crontab_run_as(only_entry(fmt::format("0 * * * * {} true", field), CrontabFormat::system), "root");
    REQUIRE_FALSE(run_as);
    CHECK(run_as.error().message.find("is not a user name") != std::string::npos);
  }
}

TEST_CASE("a system crontab line without a command after the user is not converted") {
  auto problem = only_problem("17 * * * * root", CrontabFormat::system);
  CHECK(problem.kind == ProblemKind::not_converted);
  CHECK(problem.message == "no command");
}

TEST_CASE("comments and blank lines are skipped but counted") {
  auto entry = only_entry("# a comment\n\n   \t# indented comment\n@hourly date\n");
  CHECK(entry.line == 4);
  CHECK(entry.schedule == "@hourly");
}

TEST_CASE("the first unescaped percent ends the command and the rest is its input") {
  auto entry = only_entry("0 22 * * 1-5\tmail -s \"It's 10pm\" joe%Joe,%%Where are your kids?%");
  CHECK(entry.command == "mail -s \"It's 10pm\" joe");
  REQUIRE(entry.input);
  CHECK(*entry.input == "Joe,\n\nWhere are your kids?\n");
}

TEST_CASE("an escaped percent stays a percent, in the command and in the input") {
  auto entry = only_entry(R"(33 22 * * * expr $(date +\%s) / 60 \% 9 > /dev/null || echo floor%50\%\n%)");
  CHECK(entry.command == "expr $(date +%s) / 60 % 9 > /dev/null || echo floor");
  REQUIRE(entry.input);
  CHECK(*entry.input == "50%\\n\n");
}

TEST_CASE("environment lines apply to the entries below them") {
  auto crontab = parse("A=1\n* * * * * one\nB = two words  \nA='  spaced  '\n* * * * * two\n");
  REQUIRE(crontab.entries.size() == 2);
  CHECK(crontab.problems.empty());
  CHECK(crontab.entries[0].env == std::vector<EnvVar>{{"A", "1"}});
  CHECK(crontab.entries[1].env == std::vector<EnvVar>{{"A", "  spaced  "}, {"B", "two words"}});
}

TEST_CASE("a double-quoted value and a quoted name are unquoted") {
  auto entry = only_entry("\"GREETING\" = \"hello there\"\n* * * * * echo $GREETING\n");
  CHECK(entry.env == std::vector<EnvVar>{{"GREETING", "hello there"}});
}

TEST_CASE("a quoted value that does not close is not converted") {
  auto problem = only_problem("GREETING='hello\n");
  CHECK(problem.line == 1);
  CHECK(problem.kind == ProblemKind::not_converted);
  CHECK(problem.message == "GREETING: the quoted value does not end with its closing '");
}

TEST_CASE("SHELL picks the shell and stays in the environment") {
  auto entry = only_entry("SHELL=/bin/bash\n* * * * * echo $BASH_VERSION\n");
  CHECK(entry.shell == "/bin/bash");
  CHECK(entry.env == std::vector<EnvVar>{{"SHELL", "/bin/bash"}});
}

TEST_CASE("CRON_TZ sets the zone of the entries below it and is no environment variable") {
  auto entry = only_entry("CRON_TZ=Europe/Berlin\n0 7 * * * wake\n");
  CHECK(entry.tz == "Europe/Berlin");
  CHECK(entry.env.empty());
  auto problem = only_problem("CRON_TZ=Mars/Olympus\n");
  CHECK(problem.kind == ProblemKind::not_converted);
  CHECK(problem.message == "CRON_TZ=Mars/Olympus: unknown time zone");
}

TEST_CASE("MAILTO is reported, not passed on") {
  auto crontab = parse("MAILTO=paul\n15 14 1 * * $HOME/bin/monthly\n");
  REQUIRE(crontab.problems.size() == 1);
  CHECK(crontab.problems[0].line == 1);
  CHECK(crontab.problems[0].kind == ProblemKind::note);
  CHECK(crontab.problems[0].message.starts_with("MAILTO=paul: not mailed: taskd mails only addresses with an @"));
  REQUIRE(crontab.entries.size() == 1);
  CHECK(crontab.entries[0].env.empty());
  CHECK(crontab.entries[0].mail_to == "");
}

TEST_CASE("MAILTO with addresses becomes the mail of the lines below it") {
  auto crontab = parse("0 1 * * * early\nMAILTO=ops@example.org,me@example.org\n15 14 1 * * monthly\n");
  REQUIRE(crontab.entries.size() == 2);
  CHECK_FALSE(crontab.entries[0].mail_to.has_value());
  CHECK(crontab.entries[1].mail_to == "ops@example.org,me@example.org");
  CHECK(crontab.problems.at(0).message.starts_with("MAILTO=ops@example.org,me@example.org: mailed when a task fails"));
}

TEST_CASE("the environment copied into the entries stops at max_carried_environment") {
  // BIG comes to exactly 1 MiB as execve counts it: sixteen entries carry the
  // limit and the seventeenth would pass it; setting BIG again counts once.
  std::string big =
      "BIG=" + std::string((std::size_t{1} << 20) - std::string_view("BIG=").size() - 1 - sizeof(char*), 'x') + "\n";
  std::string text = big + big;
  for (int i = 0; i < 17; ++i) text += "@daily job\n";
  auto crontab = parse(text);
  CHECK(crontab.entries.size() == 16);
  REQUIRE(crontab.problems.size() == 1);
  CHECK(crontab.problems[0].line == 19);
  CHECK(crontab.problems[0].kind == ProblemKind::not_converted);
  CHECK(crontab.problems[0].message ==
        "the 1 variable(s) set above this line (1048576 bytes) would bring the environment copied into the tasks of "
        "this crontab past 16 MiB in all (each task keeps a copy of them)");
}

TEST_CASE("@reboot is converted: its task runs once after each boot") {
  auto entry = only_entry("@reboot /usr/local/bin/start-things\n");
  CHECK(entry.schedule == "@reboot");
  CHECK(entry.command == "/usr/local/bin/start-things");
  auto system = only_entry("@reboot www-data /usr/local/bin/start-things\n", CrontabFormat::system);
  CHECK(system.user == "www-data");
}

TEST_CASE("malformed lines are reported with their line number and the reason") {
  auto crontab = parse("* * * * * fine\n61 * * * * minute\n* * *\n@fortnightly x\nNOT-A-NAME=1\n");
  CHECK(crontab.entries.size() == 1);
  REQUIRE(crontab.problems.size() == 4);
  CHECK(crontab.problems[0].line == 2);
  CHECK(crontab.problems[0].message.find("61") != std::string::npos);
  CHECK(crontab.problems[1].line == 3);
  CHECK(crontab.problems[1].message == "expected five time fields (minute hour day month weekday) and a command");
  CHECK(crontab.problems[2].line == 4);
  CHECK(crontab.problems[2].message.find("@fortnightly") != std::string::npos);
  CHECK(crontab.problems[3].line == 5);
  CHECK(crontab.problems[3].message == "\"NOT-A-NAME\" is not an environment variable name (letters, digits and _)");
}

TEST_CASE("the task's command runs the shell line, with printf feeding the input") {
  CrontabEntry entry;
  entry.command = "cat >> /tmp/out # keep";
  CHECK(crontab_command(entry).shell);
  CHECK(crontab_command(entry).argv == std::vector<std::string>{"cat >> /tmp/out # keep"});
  entry.input = "it's\n";
  CHECK(crontab_command(entry).argv ==
        std::vector<std::string>{"printf '%s' 'it'\\''s\n' | (\ncat >> /tmp/out # keep\n)"});
  entry.shell = "/bin/bash";
  auto command = crontab_command(entry);
  CHECK_FALSE(command.shell);
  REQUIRE(command.argv.size() == 3);
  CHECK(command.argv[0] == "/bin/bash");
  CHECK(command.argv[1] == "-c");
}

TEST_CASE("a task is named after the main program of its line") {
  CHECK(names_of("5 0 * * * $HOME/bin/daily.job >> $HOME/tmp/out 2>&1") == std::vector<std::string>{"daily.job"});
  CHECK(names_of("17 * * * * cd / && run-parts --report /etc/cron.hourly") ==
        std::vector<std::string>{"run-parts-report-cron.hourly"});
  CHECK(names_of("25 6 * * * test -x /usr/sbin/anacron || { cd / && run-parts --report /etc/cron.daily; }") ==
        std::vector<std::string>{"run-parts-report-cron.daily"});
  CHECK(names_of("10 3 * * * test -e /run/systemd || SERVICE_MODE=1 /sbin/e2scrub_all -A -r") ==
        std::vector<std::string>{"e2scrub-all-A-r"});
  CHECK(names_of("0 22 * * 1-5 mail -s \"It's 10pm\" joe%Joe,%%Where?%") ==
        std::vector<std::string>{"mail-s-It-s-10pm-joe"});
}

TEST_CASE("a long command gives a name cut at a word") {
  auto names = names_of("* * * * * echo \"run 23 minutes after midn, 2am, 4am ..., everyday, and then some more\"");
  REQUIRE(names.size() == 1);
  CHECK(names[0] == "echo-run-23-minutes-after-midn-2am-4am-everyday");
  CHECK(validate_task_name(names[0]));
}

TEST_CASE("a name cut right at the end of a word keeps that word") {
  // 48 characters up to "everydayX", then more words.
  auto names = names_of("* * * * * echo run 23 minutes after midn 2am 4am everydayX and more");
  CHECK(names == std::vector<std::string>{"echo-run-23-minutes-after-midn-2am-4am-everydayX"});
  names = names_of("* * * * * echo run 23 minutes after midn 2am 4am everydayXY and more");
  CHECK(names == std::vector<std::string>{"echo-run-23-minutes-after-midn-2am-4am"});
}

TEST_CASE("the same command twice gets numbered names, in the order of the file") {
  CHECK(names_of("0 * * * * backup\n30 * * * * backup\n@daily backup-2\n@weekly backup") ==
        std::vector<std::string>{"backup", "backup-2", "backup-2-2", "backup-3"});
}

TEST_CASE("a name met many times is numbered in order, around the numbers other lines took") {
  std::string text = "@daily backup-3\n";
  for (int i = 0; i < 5; ++i) text += "@daily backup\n";
  CHECK(names_of(text) ==
        std::vector<std::string>{"backup-3", "backup", "backup-2", "backup-4", "backup-5", "backup-6"});
}

TEST_CASE("a command of nothing but punctuation is still named") {
  auto names = names_of("* * * * * : > /tmp/x");
  CHECK(names == std::vector<std::string>{"cron"});
}
