// Listings at scale: filters and their indexes, the counters the schema's
// triggers keep, and the retention of history.
#include <doctest/doctest.h>

#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>

#include "../unit/test_helpers.hpp"
#include "taskd_schema_sql.hpp"
#include "store/sqlite.hpp"
#include "store/overview.hpp"
#include "store/runs.hpp"
#include "temp_db.hpp"

using namespace taskd;
using namespace std::chrono_literals;
using test::at;

namespace {

std::vector<std::string> names_of(store::Database& db, const store::TaskFilter& filter) {
  std::vector<std::string> names;
  REQUIRE(store::for_each_task(db, filter, [&](const store::StoredTask& task) -> core::Result<void> {
    names.push_back(task->definition.name);
    return {};
  }));
  return names;
}

void set_state(store::Database& db, const core::Task& task, void (*change)(core::TaskState&)) {
  auto state = task.state;
  change(state);
  REQUIRE(store::save_state(db, task.id, state, at(10, 0)));
}

// One task in each state: a, b paused, c disabled, d failing; e paused
// after failing (paused comes first).
void add_one_of_each_state(store::Database& db) {
  test::add_task(db, test::every_definition("a", 60s), at(10, 0));
  set_state(db, test::add_task(db, test::every_definition("b", 60s), at(10, 0)),
            [](core::TaskState& s) { s.paused = true; });
  set_state(db, test::add_task(db, test::every_definition("c", 60s), at(10, 0)),
            [](core::TaskState& s) { s.disabled_until_update = true; });
  set_state(db, test::add_task(db, test::every_definition("d", 60s), at(10, 0)),
            [](core::TaskState& s) { s.last_status = core::RunStatus::timed_out; });
  set_state(db, test::add_task(db, test::every_definition("e", 60s), at(10, 0)), [](core::TaskState& s) {
    s.last_status = core::RunStatus::failed;
    s.paused = true;
  });
}

// The lines of the query plan that read `table` (by its name or alias).
std::vector<std::string> plan_reads(store::Database& db, const std::string& sql, std::string_view table) {
  SQLite::Statement explain(store::sqlite_handle(db), "EXPLAIN QUERY PLAN " + sql);
  std::vector<std::string> reads;
  while (explain.executeStep()) {
    std::string detail = explain.getColumn(3).getString();
    if (detail.starts_with(fmt::format("SCAN {}", table)) || detail.starts_with(fmt::format("SEARCH {}", table)))
      reads.push_back(detail);
  }
  return reads;
}

// Whether every read of `table` in the plan goes through an index (the
// primary key counts: it is the table's own order).
void check_uses_index(store::Database& db, const std::string& sql, std::string_view table) {
  auto reads = plan_reads(db, sql, table);
  REQUIRE_FALSE(reads.empty());
  for (const auto& read : reads) {
    INFO(sql);
    INFO(read);
    CHECK(read.find(" USING ") != std::string::npos);
  }
}

// A run of `task` queued for `slot`, started `late` after it and ended
// `status` a second later.
std::int64_t ended_run(store::Database& db, const core::Task& task, core::Time slot, core::Millis late,
                       core::RunStatus status, core::Trigger trigger = core::Trigger::schedule) {
  auto id = store::insert_queued_run(db, task, slot, trigger, slot).value();
  auto started = slot + late;
  std::string uid = fmt::format("uid-{}", id);
  store::StartRecord record{id, uid, 1, 1, started, started + 30s, started + 60s, {"h", "b", 1, 1}};
  auto state = store::find_task(db, task.id).value()->state;  // left as it is
  REQUIRE(store::mark_running(db, record, task.id, state, started).value());
  REQUIRE(store::finish_run(db, {id, uid, status, started + 1s, 0, std::nullopt, "", "out", false}).value());
  return id;
}

std::int64_t total_of(store::Database& db, std::string_view status) {
  auto counts = store::ended_runs_by_status(db).value();
  for (const auto& count : counts) {
    if (count.name == status) return count.count;
  }
  return 0;
}

}  // namespace

TEST_CASE("list --state selects each task by the one state it is in") {
  test::TempDb temp;
  add_one_of_each_state(temp.db);
  using core::Condition;
  CHECK(names_of(temp.db, {.condition = Condition::active}) == std::vector<std::string>{"a"});
  CHECK(names_of(temp.db, {.condition = Condition::paused}) == std::vector<std::string>{"b", "e"});
  CHECK(names_of(temp.db, {.condition = Condition::disabled}) == std::vector<std::string>{"c"});
  CHECK(names_of(temp.db, {.condition = Condition::failing}) == std::vector<std::string>{"d"});
  CHECK(store::count_tasks(temp.db, {.condition = Condition::paused}).value() == 2);
  CHECK(store::count_tasks(temp.db, {}).value() == 5);
  auto tasks = store::list_tasks(temp.db, {}).value();
  for (const auto& task : tasks) {
    INFO(task->definition.name);
    auto listed = names_of(temp.db, {.condition = core::condition_of(task->state)});
    CHECK(std::ranges::find(listed, task->definition.name) != listed.end());
  }
}

TEST_CASE("a name glob, a group, an owner and a limit narrow the listing, in name order") {
  test::TempDb temp;
  for (auto name : {"tmp-2", "prod-1", "tmp-1", "tmq", "tmp-10"}) {
    auto d = test::every_definition(name, 60s);
    d.group = std::string(name).starts_with("tmp") ? "scratch" : "";
    d.owner = name == std::string("tmp-1") ? "me" : "";
    test::add_task(temp.db, d, at(10, 0));
  }
  CHECK(names_of(temp.db, {.name_glob = "tmp-*"}) == std::vector<std::string>{"tmp-1", "tmp-10", "tmp-2"});
  CHECK(names_of(temp.db, {.name_glob = "*-1"}) == std::vector<std::string>{"prod-1", "tmp-1"});
  CHECK(names_of(temp.db, {.name_glob = "tm?"}) == std::vector<std::string>{"tmq"});
  CHECK(names_of(temp.db, {.name_glob = "TMP-*"}).empty());
  CHECK(names_of(temp.db, {.group = "scratch", .limit = 2}) == std::vector<std::string>{"tmp-1", "tmp-10"});
  CHECK(names_of(temp.db, {.owner = "me"}) == std::vector<std::string>{"tmp-1"});
  CHECK(store::count_tasks(temp.db, {.group = "scratch", .name_glob = "*0"}).value() == 1);
  CHECK(names_of(temp.db, {.names = {"tmq", "prod-1", "none"}}) == std::vector<std::string>{"prod-1", "tmq"});
  CHECK(names_of(temp.db, {.names = {"tmq", "tmp-2"}, .group = "scratch"}) == std::vector<std::string>{"tmp-2"});
}

TEST_CASE("the tasks' owners are named once each, \"\" for tasks without one") {
  test::TempDb temp;
  CHECK(store::task_owners(temp.db).value().empty());
  for (auto [name, owner] : {std::pair{"a", "ops"}, {"b", "ops"}, {"c", "dev"}}) {
    auto d = test::every_definition(name, 60s);
    d.owner = owner;
    test::add_task(temp.db, d, at(10, 0));
  }
  auto owners = store::task_owners(temp.db).value();
  std::ranges::sort(owners);
  CHECK(owners == std::vector<std::string>{"dev", "ops"});
  test::add_task(temp.db, test::every_definition("d", 60s), at(10, 0));
  owners = store::task_owners(temp.db).value();
  std::ranges::sort(owners);
  CHECK(owners == std::vector<std::string>{"", "dev", "ops"});
}

TEST_CASE("every listing filter reads an index (EXPLAIN QUERY PLAN)" * doctest::test_suite("sqlite")) {
  test::TempDb temp;
  using core::Condition;
  std::vector<store::TaskFilter> filters{
      {},
      {.group = "g"},
      {.owner = "o"},
      {.condition = Condition::active},
      {.condition = Condition::paused},
      {.condition = Condition::disabled},
      {.condition = Condition::failing},
      {.name_glob = "web-*", .limit = 10},
      {.group = "g", .owner = "o", .condition = Condition::failing, .name_glob = "x*"},
      {.names = {"web", "db"}},
      {.names = {"web"}, .group = "g"},
  };
  for (const auto& filter : filters) check_uses_index(temp.db, store::task_query_sql(filter), "tasks");
  // The rare states read their own partial index, not every task.
  CHECK(plan_reads(temp.db, store::task_query_sql({.condition = Condition::disabled}), "tasks").front().find(
            "tasks_disabled") != std::string::npos);
  CHECK(plan_reads(temp.db, store::task_query_sql({.condition = Condition::failing}), "tasks").front().find(
            "tasks_failing") != std::string::npos);
  CHECK(plan_reads(temp.db, store::task_query_sql({.name_glob = "web-*"}), "tasks").front().find("name>?") !=
        std::string::npos);
}

TEST_CASE("every history filter reads an index (EXPLAIN QUERY PLAN)" * doctest::test_suite("sqlite")) {
  test::TempDb temp;
  std::vector<store::RunFilter> filters{
      {.task_id = 1},
      {.statuses = {core::RunStatus::running}},
      {.statuses = {core::RunStatus::failed}, .limit = 20},
      {.statuses = {core::RunStatus::queued}},
      {.statuses = {core::RunStatus::failed, core::RunStatus::lost}, .limit = 20},
      {.trigger = core::Trigger::manual},
      {.since = at(10, 0)},
      {.until = at(10, 0)},
      {.since = at(9, 0), .until = at(10, 0), .limit = 5},
      {.task_id = 1, .statuses = {core::RunStatus::lost}, .trigger = core::Trigger::retry, .since = at(9, 0)},
      {.since = at(9, 0), .limit = 5, .before = 7},
  };
  for (const auto& filter : filters) check_uses_index(temp.db, store::run_query_sql(filter), "r");
  // Unfiltered, or of the status or trigger most runs have, the newest runs
  // are the table's last rows: read backwards, up to the limit, nothing sorted.
  for (const auto& common : std::vector<store::RunFilter>{
           {.limit = 20}, {.statuses = {core::RunStatus::succeeded}, .limit = 20}, {.trigger = core::Trigger::schedule}}) {
    SQLite::Statement plan(store::sqlite_handle(temp.db), "EXPLAIN QUERY PLAN " + store::run_query_sql(common));
    while (plan.executeStep()) CHECK(plan.getColumn(3).getString().find("TEMP B-TREE") == std::string::npos);
  }
  CHECK(plan_reads(temp.db, store::run_query_sql({.statuses = {core::RunStatus::failed}}), "r").front().find(
            "runs_unusual") != std::string::npos);
  CHECK(plan_reads(temp.db, store::run_query_sql({.statuses = {core::RunStatus::failed, core::RunStatus::lost}}), "r")
            .front()
            .find("runs_unusual") != std::string::npos);
  CHECK(plan_reads(temp.db, store::run_query_sql({.trigger = core::Trigger::retry}), "r").front().find(
            "runs_unscheduled") != std::string::npos);
  CHECK(plan_reads(temp.db, store::run_query_sql({.task_id = 1, .statuses = {core::RunStatus::failed}}), "r")
            .front()
            .find("runs_task") != std::string::npos);
  CHECK(plan_reads(temp.db, store::run_query_sql({.until = at(10, 0)}), "r").front().find("runs_slot") !=
        std::string::npos);
}

TEST_CASE("history filters by status, trigger and slot window") {
  test::TempDb temp;
  auto a = test::add_task(temp.db, test::every_definition("a", 60s), at(10, 0));
  auto b = test::add_task(temp.db, test::every_definition("b", 60s), at(10, 0));
  auto a1 = ended_run(temp.db, a, at(10, 1), 0ms, core::RunStatus::succeeded);
  auto b1 = ended_run(temp.db, b, at(10, 2), 0ms, core::RunStatus::failed);
  auto a2 = ended_run(temp.db, a, at(10, 3), 0ms, core::RunStatus::failed, core::Trigger::retry);
  auto b2 = ended_run(temp.db, b, at(10, 0, 30), 0ms, core::RunStatus::succeeded, core::Trigger::manual);
  auto ids = [&](const store::RunFilter& filter) {
    std::vector<std::int64_t> out;
    REQUIRE(store::for_each_run(temp.db, filter, [&](const store::RunRecord& run) -> core::Result<void> {
      out.push_back(run.id);
      return {};
    }));
    return out;
  };
  CHECK(ids({}) == std::vector<std::int64_t>{b2, a2, b1, a1});
  CHECK(ids({.statuses = {core::RunStatus::failed}}) == std::vector<std::int64_t>{a2, b1});
  CHECK(ids({.task_id = a.id, .statuses = {core::RunStatus::failed}}) == std::vector<std::int64_t>{a2});
  CHECK(ids({.statuses = {core::RunStatus::failed, core::RunStatus::succeeded}}) ==
        std::vector<std::int64_t>{b2, a2, b1, a1});
  CHECK(ids({.statuses = {core::RunStatus::lost, core::RunStatus::failed}, .limit = 1}) == std::vector<std::int64_t>{a2});
  CHECK(ids({.trigger = core::Trigger::manual}) == std::vector<std::int64_t>{b2});
  // A window lists newest slot first: b2 served 10:00:30, before a1's slot.
  CHECK(ids({.since = at(10, 0, 30), .until = at(10, 3)}) == std::vector<std::int64_t>{b1, a1, b2});
  CHECK(ids({.since = at(10, 2), .limit = 1}) == std::vector<std::int64_t>{a2});
}

TEST_CASE("history pages after a run, in the listing's order, even among the runs of one slot") {
  test::TempDb temp;
  auto a = test::add_task(temp.db, test::every_definition("a", 60s), at(10, 0));
  auto b = test::add_task(temp.db, test::every_definition("b", 60s), at(10, 0));
  auto a1 = ended_run(temp.db, a, at(10, 1), 0ms, core::RunStatus::succeeded);
  auto b1 = ended_run(temp.db, b, at(10, 1), 0ms, core::RunStatus::failed);
  auto a0 = ended_run(temp.db, a, at(10, 0), 0ms, core::RunStatus::succeeded, core::Trigger::manual);
  auto b2 = ended_run(temp.db, b, at(10, 2), 0ms, core::RunStatus::succeeded);
  auto pages = [&](store::RunFilter filter) {
    std::vector<std::vector<std::int64_t>> out;
    for (bool more = true; more;) {
      std::vector<std::int64_t> page;
      REQUIRE(store::for_each_run(temp.db, filter, [&](const store::RunRecord& run) -> core::Result<void> {
        page.push_back(run.id);
        return {};
      }));
      more = static_cast<std::int64_t>(page.size()) == filter.limit;
      if (!page.empty()) filter.before = page.back();
      out.push_back(page);
    }
    return out;
  };
  using Pages = std::vector<std::vector<std::int64_t>>;
  CHECK(pages({.limit = 3}) == Pages{{b2, a0, b1}, {a1}});
  // A window lists newest slot first; a1 and b1 share a slot and a page's end.
  CHECK(pages({.since = at(10, 0), .limit = 2}) == Pages{{b2, b1}, {a1, a0}, {}});
  CHECK(pages({.since = at(10, 0), .until = at(10, 2), .limit = 1}) == Pages{{b1}, {a1}, {a0}, {}});
}

TEST_CASE("a run is counted once, when it ends, and pruning keeps the counts") {
  test::TempDb temp;
  auto a = test::add_task(temp.db, test::every_definition("a", 60s), at(10, 0));
  auto queued = store::insert_queued_run(temp.db, a, at(10, 0), core::Trigger::schedule, at(10, 0)).value();
  CHECK(total_of(temp.db, "queued") == 0);
  REQUIRE(store::mark_dropped(temp.db, queued, "dropped", at(10, 0)).value());
  CHECK(total_of(temp.db, "dropped") == 1);
  ended_run(temp.db, a, at(10, 1), 3ms, core::RunStatus::succeeded);
  ended_run(temp.db, a, at(10, 2), 40ms, core::RunStatus::succeeded);
  ended_run(temp.db, a, at(10, 3), 7s, core::RunStatus::failed, core::Trigger::retry);
  REQUIRE(store::insert_skipped_run(temp.db, a.id, {3, at(10, 4), at(10, 6), "skipped"}, at(10, 7)));
  CHECK(total_of(temp.db, "succeeded") == 2);
  CHECK(total_of(temp.db, "failed") == 1);
  CHECK(total_of(temp.db, "skipped") == 1);

  auto lateness = store::start_lateness(temp.db).value();
  CHECK(lateness.count == 2);  // the retry is not a scheduled run
  CHECK(lateness.sum_seconds == doctest::Approx(0.043));
  REQUIRE(lateness.bounds.size() == lateness.at_most.size());
  CHECK(lateness.bounds.front() == doctest::Approx(0.005));
  CHECK(lateness.at_most.front() == 1);
  CHECK(lateness.at_most.back() == 2);

  CHECK(store::history_size(temp.db).value().runs == 5);
  CHECK(store::history_size(temp.db).value().output_bytes == 9);
  CHECK(store::prune_history(temp.db, a.id, 1).value() == 4);
  CHECK(store::history_size(temp.db).value().runs == 1);
  CHECK(store::history_size(temp.db).value().output_bytes == 0);
  CHECK(total_of(temp.db, "succeeded") == 2);
  CHECK(store::start_lateness(temp.db).value().count == 2);
}

TEST_CASE("a file of schema 3 gets its counters from the history it holds" * doctest::test_suite("sqlite")) {
  test::TempDir dir;
  auto path = dir.path() / "old.db";
  {
    SQLite::Database old(path.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    auto schema = std::string(taskd_schema_sql);
    old.exec(schema.substr(0, schema.find("-- migrate: 4")));
    old.exec("PRAGMA user_version = 3; PRAGMA application_id = 1952543595");
    old.exec(
        "INSERT INTO tasks (id, name, command, schedule_kind, schedule_spec, created_at, updated_at) "
        "VALUES (1, 'a', '[\"true\"]', 'every', '1m', 0, 0)");
    old.exec(
        "INSERT INTO runs (task_id, status, trigger, scheduled_at, enqueued_at, not_before, started_at, output) VALUES "
        "(1, 'succeeded', 'schedule', 1000, 1000, 1000, 1004, x'6f6b'), "
        "(1, 'failed', 'schedule', 2000, 2000, 2000, 2600, x''), "
        "(1, 'failed', 'manual', 3000, 3000, 3000, 3000, x''), "
        "(1, 'running', 'schedule', 4000, 4000, 4000, 4001, x'')");
  }
  auto db = store::Database::open(path).value();
  CHECK(store::sqlite_handle(db).execAndGet("PRAGMA user_version").getInt() == store::schema_version());
  CHECK(total_of(db, "succeeded") == 1);
  CHECK(total_of(db, "failed") == 2);
  CHECK(total_of(db, "running") == 0);
  auto lateness = store::start_lateness(db).value();
  CHECK(lateness.count == 2);
  CHECK(lateness.sum_seconds == doctest::Approx(0.604));
  CHECK(lateness.at_most.front() == 1);  // 4 ms <= 5 ms; 600 ms is not
  CHECK(store::history_size(db).value().runs == 3);  // the running run is not history yet
  CHECK(store::history_size(db).value().output_bytes == 2);
  CHECK(store::find_task(db, "a").value()->definition.keep_runs == 1000);
}

TEST_CASE("a file of schema 12 gets each failing task's streak from the history it holds" *
          doctest::test_suite("sqlite")) {
  test::TempDir dir;
  auto path = dir.path() / "old.db";
  {
    SQLite::Database old(path.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    auto schema = std::string(taskd_schema_sql);
    old.exec(schema.substr(0, schema.find("-- migrate: 13")));
    old.exec("PRAGMA user_version = 12; PRAGMA application_id = 1952543595");
    old.exec(
        "INSERT INTO tasks (id, name, command, schedule_kind, schedule_spec, created_at, updated_at, last_status, "
        "last_finished_at, last_succeeded_at) VALUES "
        "(1, 'failing', '[\"true\"]', 'every', '1m', 0, 0, 'failed', 3000, 1500), "
        "(2, 'pruned', '[\"true\"]', 'every', '1m', 0, 0, 'timed_out', 7000, NULL), "
        "(3, 'fine', '[\"true\"]', 'every', '1m', 0, 0, 'succeeded', 1500, 1500)");
    old.exec(
        "INSERT INTO runs (task_id, status, trigger, scheduled_at, enqueued_at, not_before, started_at, finished_at, "
        "output) VALUES "
        "(1, 'failed', 'schedule', 900, 900, 900, 900, 1000, x''), "
        "(1, 'succeeded', 'schedule', 1400, 1400, 1400, 1400, 1500, x''), "
        "(1, 'lost', 'schedule', 2400, 2400, 2400, 2400, 2500, x''), "
        "(1, 'failed', 'retry', 2900, 2900, 2900, 2900, 3000, x''), "
        "(3, 'succeeded', 'schedule', 1400, 1400, 1400, 1400, 1500, x'')");
  }
  auto db = store::Database::open(path).value();
  auto state_of = [&](std::string_view name) { return store::find_task(db, name).value()->state; };
  CHECK(state_of("failing").failing_since == core::from_unix_ms(2500));
  CHECK(state_of("pruned").failing_since == core::from_unix_ms(7000));  // no history left: its last attempt
  CHECK_FALSE(state_of("fine").failing_since);
  CHECK_FALSE(state_of("failing").ladder_exhausted_at);
  CHECK_FALSE(store::find_task(db, "failing").value()->definition.disable_when_exhausted);
}

TEST_CASE("runs whose slot is older than the cutoff go oldest first, in batches, never an unfinished one") {
  test::TempDb temp;
  auto a = test::add_task(temp.db, test::every_definition("a", 60s), at(10, 0));
  for (int minute = 0; minute < 5; ++minute) ended_run(temp.db, a, at(9, minute), 0ms, core::RunStatus::succeeded);
  auto stuck = store::insert_queued_run(temp.db, a, at(8, 0), core::Trigger::schedule, at(8, 0)).value();
  auto recent = ended_run(temp.db, a, at(11, 0), 0ms, core::RunStatus::succeeded);
  CHECK(store::has_runs_before(temp.db, at(10, 0)).value());
  CHECK(store::prune_runs_before(temp.db, at(10, 0), 3).value() == 3);
  CHECK(store::prune_runs_before(temp.db, at(10, 0), 3).value() == 2);
  CHECK_FALSE(store::has_runs_before(temp.db, at(10, 0)).value());
  CHECK(store::prune_runs_before(temp.db, at(10, 0), 3).value() == 0);
  auto left = store::list_runs(temp.db, a.id, 10).value();
  REQUIRE(left.size() == 2);
  CHECK(left[0].id == recent);
  CHECK(left[1].id == stuck);
}
