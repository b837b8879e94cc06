// A task row as the store reads it (store/task_row.cpp): a column that does
// not hold what its field needs makes the row a malformed one that names
// the column and says what is wrong, and every other column still reads.
#include <doctest/doctest.h>

#include <algorithm>
#include <fmt/format.h>

#include "../unit/test_helpers.hpp"
#include "store/columns.hpp"
#include "store/tasks.hpp"
#include "temp_db.hpp"

using namespace taskd;
using namespace std::chrono_literals;
using test::at;

namespace {

struct Damage {
  const char* column;
  const char* value;  // an SQL literal both stores take
};

// Values a hand can write into a task row, column by column (the schema's
// CHECK constraints refuse others).
const Damage damages[] = {
    {"command", "'{'"},
    {"command", "'[\"a\", 1]'"},
    {"command", "'[\"a\"'"},
    {"command", "'[\"a\\\\\", 1]'"},
    {"env", "'{'"},
    {"env", "'[[\"A\"]]'"},
    {"env", "'[[\"A\", 1]]'"},
    {"retry", "'[1,2'"},
    {"retry", "'[-1]'"},
    {"retry", "'[316224001]'"},
    {"retry", "'[9223372036854775807]'"},
    {"retry", "'[1] 2'"},
    {"permanent_exit", "'[0]'"},
    {"permanent_exit", "'[256]'"},
    {"schedule_spec", "'5x'"},
    {"tz", "'Mars/Olympus'"},
    {"dtstart", "'garbage'"},
    {"catch_up", "'all:99999999999'"},
    {"last_status", "'perhaps'"},
    {"phase", "1e300"},
    {"phase", "-1"},
    {"jitter", "-1"},
    {"kill_grace", "9223372036854775807"},
    {"timeout", "-5"},
    {"tolerance", "316224001"},
    {"alert_after", "9223372036854775807"},
    {"catch_up_window", "9223372036854775807"},
    {"next_run_at", "9223372036854775807"},
    {"last_run_at", "-1"},
    {"attempt_started_at", "253402300800000"},
    {"last_succeeded_at", "-9223372036854775808"},
    {"failing_since", "253402300800000"},
    {"ladder_exhausted_at", "-9223372036854775808"},
    {"attempt_no", "2147483647"},
    {"attempt_no", "-1"},
    {"run_index", "9223372036854775807"},
    {"priority", "9999999999"},
    {"keep_runs", "9999999999"},
};

void damage(store::Database& db, std::string_view name, const Damage& damage) {
  auto update = db.prepare(fmt::format("UPDATE tasks SET {} = {} WHERE name = ?", damage.column, damage.value));
  update.bind(1, name);
  update.exec();
}

}  // namespace

TEST_CASE("a column that does not read makes the row malformed, naming the column; the rest reads") {
  test::TempDb temp;
  for (const auto& d : damages) {
    INFO(fmt::format("{} = {}", d.column, d.value));
    auto name = fmt::format("t-{}-{}", d.column, &d - damages);
    auto definition = test::every_definition(name, 60s);
    definition.owner = "me";
    test::add_task(temp.db, definition, at(10, 0));
    damage(temp.db, name, d);
    auto found = store::find_stored_task(temp.db, name).value();
    REQUIRE(found);
    REQUIRE_FALSE(*found);
    const auto& malformed = found->error();
    REQUIRE(malformed.problems.size() == 1);
    CHECK(malformed.problems[0].column == d.column);
    CHECK(malformed.readable.definition.name == name);
    CHECK(malformed.readable.definition.owner == "me");
    auto refused = store::find_task(temp.db, name);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == core::ErrorKind::bad_input);
    CHECK(refused.error().message.find(d.column) != std::string::npos);
  }
}

TEST_CASE("a value of the wrong type in an integer column is malformed" * doctest::test_suite("sqlite")) {
  test::TempDb temp;
  for (const auto& d : {Damage{"next_run_at", "'soon'"}, Damage{"shell", "'yes'"}, Damage{"priority", "1.5"},
                        Damage{"jitter", "x'00'"}}) {
    INFO(fmt::format("{} = {}", d.column, d.value));
    auto name = fmt::format("t-{}", d.column);
    test::add_task(temp.db, test::every_definition(name, 60s), at(10, 0));
    damage(temp.db, name, d);
    auto found = store::find_stored_task(temp.db, name).value();
    REQUIRE(found);
    REQUIRE_FALSE(*found);
    CHECK(found->error().problems.at(0).column == d.column);
  }
}

TEST_CASE("what a problem quotes is printable and bounded, whatever the column holds") {
  test::TempDb temp;
  test::add_task(temp.db, test::every_definition("t", 60s), at(10, 0));
  auto update = temp.db.prepare("UPDATE tasks SET env = ? WHERE name = 't'");
  update.bind(1, std::string("{\x1b]0;owned\x07") + std::string(1000, 'x'));
  update.exec();
  auto found = store::find_stored_task(temp.db, "t").value();
  REQUIRE(found);
  REQUIRE_FALSE(*found);
  const auto& what = found->error().problems.at(0).what;
  CHECK(what.size() < 250);
  CHECK(what.find("\\x1b]0;owned\\x07") != std::string::npos);
  CHECK(std::ranges::all_of(what, [](char c) { return c >= 0x20 && c < 0x7f; }));
}

TEST_CASE("a task read from its row carries the schedule the row describes; a listing's head parses none") {
  test::TempDb temp;
  test::add_task(temp.db, test::every_definition("a", 60s), at(10, 0));
  test::add_task(temp.db, test::every_definition("b", 60s), at(10, 0));
  damage(temp.db, "b", {"schedule_spec", "'5x'"});
  auto task = store::find_task(temp.db, "a").value();
  REQUIRE(task);
  REQUIRE(task->schedule);
  CHECK(std::get<core::Every>(*task->schedule).interval == 60s);
  auto malformed = store::find_stored_task(temp.db, "b").value();
  REQUIRE(malformed);
  REQUIRE_FALSE(*malformed);
  CHECK_FALSE(malformed->error().readable.schedule);
  int heads = 0;
  REQUIRE(store::for_each_task_headline(temp.db, {}, [&](const store::StoredTask& head) -> core::Result<void> {
    CHECK_FALSE(store::readable(head).schedule);
    ++heads;
    return {};
  }));
  CHECK(heads == 2);
}

TEST_CASE("every malformed column of a row is named, and listings visit the row as one") {
  test::TempDb temp;
  test::add_task(temp.db, test::every_definition("a", 60s), at(10, 0));
  test::add_task(temp.db, test::every_definition("b", 60s), at(10, 0));
  damage(temp.db, "a", {"env", "'{'"});
  damage(temp.db, "a", {"retry", "'x'"});
  damage(temp.db, "a", {"next_run_at", "-1"});
  std::vector<std::string> seen;
  REQUIRE(store::for_each_task(temp.db, {}, [&](const store::StoredTask& task) -> core::Result<void> {
    auto problems = task ? "" : ": " + store::describe_problems(task.error().problems);
    seen.push_back(store::readable(task).definition.name + problems);
    return {};
  }));
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].starts_with("a: retry: "));
  CHECK(seen[0].find("; env: ") != std::string::npos);
  CHECK(seen[0].find("; next_run_at: -1 is not a time") != std::string::npos);
  CHECK(seen[1] == "b");
  auto due = store::due_tasks(temp.db, at(10, 0), 10).value();
  REQUIRE(due.size() == 1);  // a is due since 1970, b not yet
  CHECK_FALSE(due[0]);
}
