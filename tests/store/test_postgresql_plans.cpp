// The PostgreSQL store's query plans at 100 000 tasks: the tick and the
// claim read their indexes (the claim: one of those of the queued runs
// only), with the plan made for the values (a custom
// plan) and with the one a cached statement may settle on (a generic plan).
// Test suite "postgresql": only on_postgresql.py runs it.
#include <doctest/doctest.h>

#include <fmt/format.h>
#include <string>

#include "store/columns.hpp"
#include "store/postgresql.hpp"
#include "store/runs.hpp"
#include "store/tasks.hpp"
#include "sched/tick.hpp"
#include "temp_db.hpp"

using namespace taskd;

namespace {

constexpr std::int64_t base_ms = 1'800'000'000'000;

// 100 000 tasks due a second apart from base_ms, a hundredth of them in
// seven capped groups; a finished run of each, 20 queued runs and 3 running.
void fill(store::Database& db) {
  for (const char* sql : {
           "INSERT INTO groups (name, concurrency, updated_at) SELECT 'g' || i, 2, 0 FROM generate_series(0, 6) i",
           "INSERT INTO tasks (name, command, schedule_kind, schedule_spec, next_run_at, group_name, created_at, "
           "updated_at) SELECT 't' || i, '[\"/bin/true\"]', 'every', '1h', 1800000000000 + i * 1000, "
           "CASE WHEN i % 100 = 0 THEN 'g' || (i % 7) ELSE '' END, 0, 0 FROM generate_series(1, 100000) i",
           "INSERT INTO runs (task_id, status, trigger, scheduled_at, enqueued_at, not_before, started_at, finished_at) "
           "SELECT id, 'succeeded', 'schedule', next_run_at - 3600000, next_run_at - 3600000, next_run_at - 3600000, "
           "next_run_at - 3600000, next_run_at - 3599000 FROM tasks",
           "INSERT INTO runs (task_id, status, trigger, scheduled_at, enqueued_at, not_before) "
           "SELECT id, 'queued', 'schedule', next_run_at, next_run_at, next_run_at FROM tasks WHERE id % 5000 = 0",
           "INSERT INTO runs (task_id, status, trigger, scheduled_at, enqueued_at, not_before, started_at) "
           "SELECT id, 'running', 'schedule', next_run_at, next_run_at, next_run_at, next_run_at FROM tasks "
           "WHERE id IN (100, 200, 300)",
           "ANALYZE",
       })
    db.prepare(sql).exec();
}

// The plan of `sql` (taskd's, with ?N parameters) run with `arguments`,
// planned as `mode` (plan_cache_mode) would plan a cached statement.
std::string plan_of(store::Database& db, const std::string& sql, const std::string& arguments,
                    const std::string& mode) {
  db.prepare("SET plan_cache_mode = " + mode).exec();
  db.prepare("DEALLOCATE ALL").exec();
  db.prepare("PREPARE probe AS " + store::postgresql_sql(sql)).exec();
  std::string plan;
  for (auto lines = db.prepare(fmt::format("EXPLAIN EXECUTE probe({})", arguments)); lines.step();)
    plan += std::string(lines.query().text(0)) + "\n";
  return plan;
}

// No table of tasks or runs is read whole, and each entry of `indexes` is
// read: an index's name, or names separated by | of which one will do.
void check_indexed(const std::string& plan, std::initializer_list<std::string> indexes) {
  INFO(plan);
  CHECK(plan.find("Seq Scan on tasks") == std::string::npos);
  CHECK(plan.find("Seq Scan on runs") == std::string::npos);
  for (const auto& alternatives : indexes) {
    bool read = false;
    for (std::size_t at = 0; at <= alternatives.size();) {
      auto end = std::min(alternatives.find('|', at), alternatives.size());
      read = read || plan.find(" using " + alternatives.substr(at, end - at) + " ") != std::string::npos;
      at = end + 1;
    }
    CHECK_MESSAGE(read, alternatives);
  }
}

}  // namespace

TEST_CASE("at 100 000 tasks the tick and the claim read their indexes" * doctest::test_suite("postgresql")) {
  test::TempDb temp;
  fill(temp.db);
  auto now = fmt::format("{}", base_ms + 50'000);  // 50 tasks due, every queued run claimable
  for (std::string mode : {"force_custom_plan", "force_generic_plan"}) {
    CAPTURE(mode);
    check_indexed(plan_of(temp.db, store::tick_work_sql(), now, mode),
                  {"tasks_due", "runs_running", "runs_claimable"});
    check_indexed(plan_of(temp.db, store::due_tasks_sql(temp.db), now + ", 100", mode), {"tasks_due"});
    check_indexed(plan_of(temp.db, store::next_queued_runs_sql(temp.db), now + ", 10, 'here'", mode), {"runs_queue|runs_claimable|runs_active", "runs_running"});
  }
}

TEST_CASE("after a herd is queued, the claim walks the queue's index instead of sorting the queue" *
          doctest::test_suite("postgresql")) {
  test::TempDb temp;
  temp.db.prepare("INSERT INTO tasks (name, command, schedule_kind, schedule_spec, next_run_at, created_at, updated_at) "
                  "SELECT 't' || i, '[\"/bin/true\"]', 'every', '1h', 1800000000000, 0, 0 "
                  "FROM generate_series(1, 2000) i")
      .exec();
  temp.db.prepare("ANALYZE").exec();  // the statistics of a quiet store: no run queued
  auto now = core::from_unix_ms(base_ms + 1000);
  REQUIRE(sched::enqueue_due(temp.db, now).value().enqueued == 2000);
  auto plan = plan_of(temp.db, store::next_queued_runs_sql(temp.db), fmt::format("{}, 8, 'here'", base_ms + 1000), "force_custom_plan");
  INFO(plan);
  CHECK(plan.find("Index Scan using runs_queue") != std::string::npos);
  CHECK(plan.find("Sort") == std::string::npos);
}

TEST_CASE("taskd's sessions leave the server's JIT compiler off" * doctest::test_suite("postgresql")) {
  // The claim's estimated cost grows with the queue (its group-cap subplan
  // for each queued run) and passed jit_above_cost in bench/hosts.sh, where
  // compiling it took 30 ms to 0.8 s at every claim.
  test::TempDb temp;
  std::string jit;
  for (auto shown = temp.db.prepare("SHOW jit"); shown.step();) jit = shown.query().text(0);
  CHECK(jit == "off");
}
