#include <doctest/doctest.h>
#include <set>
#include <type_traits>

#include "core/task.hpp"
#include "exec/run_files.hpp"

using namespace taskd::core;

TEST_CASE("task names: letters, digits and ._:@/- up to 128 characters") {
  CHECK(validate_task_name("backup"));
  CHECK(validate_task_name("user@host:/var/www.sync-1_b"));
  CHECK(validate_task_name(std::string(128, 'a')));
  CHECK_FALSE(validate_task_name(std::string(129, 'a')));
  CHECK_FALSE(validate_task_name(""));
  CHECK_FALSE(validate_task_name("-rf"));
  auto spaced = validate_task_name("my task");
  REQUIRE_FALSE(spaced);
  CHECK(spaced.error().message.find("character 3") != std::string::npos);
  CHECK_FALSE(validate_task_name("naïve"));
}

TEST_CASE("--user: NAME or NAME:GROUP, names as useradd takes them") {
  auto user = parse_run_as("www-data");
  REQUIRE(user);
  CHECK(user->user == "www-data");
  CHECK(user->group.empty());
  auto both = parse_run_as("nobody:nogroup");
  REQUIRE(both);
  CHECK(both->user == "nobody");
  CHECK(both->group == "nogroup");
  CHECK(parse_run_as("machine$"));
  const std::string_view bad_texts[] = {"", ":adm", "www-data:", "-rf", "a b", "a:b:c", "ro\not", "$",
                                       std::string_view("a\0b", 3)};
  for (auto bad : bad_texts) {
    CAPTURE(bad);
    auto parsed = parse_run_as(bad);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().kind == ErrorKind::bad_input);
  }
  CHECK(parse_run_as("ro\x1b[2Jot").error().message.find("\\x1b") != std::string::npos);
}

// A forgotten field of the credentials a run switches to would be root's (0).
static_assert(!std::is_default_constructible_v<taskd::exec::Credentials>);

TEST_CASE("enum names read back") {
  for (auto status : {RunStatus::queued, RunStatus::running, RunStatus::succeeded, RunStatus::failed,
                      RunStatus::timed_out, RunStatus::dropped, RunStatus::skipped, RunStatus::lost}) {
    CHECK(parse_run_status(to_string(status)).value() == status);
  }
  CHECK(parse_overlap("queue").value() == Overlap::queue);
  auto bad = parse_overlap("sometimes");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("skip, queue, replace") != std::string::npos);
}

TEST_CASE("a definition's schedule") {
  TaskDefinition every;
  every.schedule_spec = "5m";
  every.phase = Seconds{30};
  auto schedule = schedule_of(every);
  REQUIRE(schedule);
  CHECK(std::get<Every>(*schedule).interval == Seconds{300});
  CHECK(std::get<Every>(*schedule).phase == Seconds{30});
  every.schedule_spec = "0s";
  CHECK_FALSE(schedule_of(every));
  TaskDefinition manual;
  manual.schedule_kind = ScheduleKind::manual;
  CHECK(std::holds_alternative<Manual>(schedule_of(manual).value()));
}

TEST_CASE("with_dst gives the schedule that a definition with those DST rules describes") {
  const DstPolicy rules{DstGap::skip, DstRepeat::twice};
  TaskDefinition cron;
  cron.schedule_kind = ScheduleKind::cron;
  cron.schedule_spec = "30 2 * * *";
  cron.tz = "Europe/Berlin";
  auto plain = schedule_of(cron).value();
  cron.dst = rules;
  CHECK(std::get<Cron>(with_dst(plain, rules)).dst == std::get<Cron>(schedule_of(cron).value()).dst);
  TaskDefinition every;
  every.schedule_spec = "5m";
  CHECK(std::get<Every>(with_dst(schedule_of(every).value(), rules)).dst == DstPolicy{});  // no wall clock
  every.tz = "Europe/Berlin";
  CHECK(std::get<Every>(with_dst(schedule_of(every).value(), rules)).dst == rules);
}

TEST_CASE("the last line of a child's output") {
  using taskd::exec::last_line;
  CHECK(last_line("first\nsecond\n") == "second");
  CHECK(last_line("only") == "only");
  CHECK(last_line("a\nb\n\n\r\n") == "b");
  CHECK(last_line("").empty());
  CHECK(last_line(std::string(600, 'x')).size() == 500);
}

TEST_CASE("the last line of a child's output is kept as UTF-8: cut between characters, bad bytes as U+FFFD") {
  using taskd::exec::last_line;
  std::string euros;
  for (int i = 0; i < 200; ++i) euros += "\xe2\x82\xac";  // 600 bytes; byte 500 is inside the 167th
  CHECK(last_line(euros) == euros.substr(0, 498));
  CHECK(last_line("done\nbad \xff byte\n") == "bad \xef\xbf\xbd byte");
}

TEST_CASE("a schedule is kept per key: the texts that alone make it, never cron's H or set dates") {
  const TaskDefinition cron{
      .name = "report", .schedule_kind = ScheduleKind::cron, .schedule_spec = "30 2 * * *", .tz = "Europe/Berlin"};
  auto key = schedule_key(cron);
  REQUIRE(key);
  auto in_utc = cron;
  in_utc.tz = "UTC";
  auto skipping = cron;
  skipping.dst.gap = DstGap::skip;
  CHECK(schedule_key(in_utc) != key);
  CHECK(schedule_key(skipping) != key);
  auto renamed = cron;
  renamed.name = "other";
  CHECK(schedule_key(renamed) == key);
  auto hashed = cron;
  hashed.schedule_spec = "H 2 * * *";
  CHECK_FALSE(schedule_key(hashed));
  auto with_exdate = cron;
  with_exdate.exdate = parse_set_dates("2026-12-24", true).value();
  CHECK_FALSE(schedule_key(with_exdate));
  TaskDefinition every;
  every.schedule_spec = "5m";
  CHECK_FALSE(schedule_key(every));
  // Parsed twice, a kept schedule is the same; H still follows each name.
  auto first = next_slot_after(schedule_of(cron).value(), Time{});
  CHECK(next_slot_after(schedule_of(renamed).value(), Time{}) == first);
  CHECK(next_slot_after(schedule_of(in_utc).value(), Time{}) != first);
  std::set<std::optional<Time>> hashed_slots;
  for (const auto* name : {"a", "b", "c", "d", "e", "f"}) {
    hashed.name = name;
    hashed_slots.insert(next_slot_after(schedule_of(hashed).value(), Time{}));
  }
  CHECK(hashed_slots.size() > 1);
}
