// Writes of WriteScope::rows on a server, each from its own connection as
// several hosts make them: they run beside one another and lock only the
// rows they change. Test suite "postgresql": only on_postgresql.py runs it.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <thread>

#include "../unit/test_helpers.hpp"
#include "sched/outcome.hpp"
#include "store/groups.hpp"
#include "store/overview.hpp"
#include "store/runs.hpp"
#include "temp_db.hpp"

using namespace taskd;
using namespace std::chrono_literals;
using test::at;

namespace {

// A new task (in `group`) with one run, queued at 10:00.
struct Queued {
  core::Task task;
  std::int64_t run_id;
};
Queued queued_run(store::Database& db, const std::string& name, const std::string& group = "") {
  auto definition = test::every_definition(name, 1h);
  definition.group = group;
  auto task = test::add_task(db, definition, at(10, 0), true);
  auto run_id = store::insert_queued_run(db, task, at(10, 0), core::Trigger::schedule, at(10, 0)).value();
  return {std::move(task), run_id};
}

// Starts `queued` as a claim does; its attempt's end, succeeded.
sched::AttemptEnd start(store::Database& db, const Queued& queued) {
  auto uid = "uid-" + queued.task.definition.name;
  auto schedule = core::schedule_of(queued.task.definition).value();
  auto started = core::on_start(queued.task.definition, schedule, queued.task.state, at(10, 0), at(10, 0), uid);
  store::StartRecord record{queued.run_id, uid, 1, 1, at(10, 0), started.deadline, started.deadline + 10s,
                            {"here", "boot", 1, 2}};
  REQUIRE(store::mark_running(db, record, queued.task.id, started.state, at(10, 0)).value());
  return {.run_id = queued.run_id, .task_id = queued.task.id, .attempt_uid = uid,
          .outcome = core::AttemptOutcome::succeeded};
}

// Another connection to the test's database, as another host has: a wait
// for this one's locks fails it after 3 s rather than hang the test.
store::Database another_connection(const test::TempDb& temp) {
  return store::Database::open(temp.location, {.busy_timeout = 3000ms, .state_dir = temp.dir.path()}).value();
}

// Whether a connection waits for a lock now (pg_locks, read on `db`).
bool a_connection_waits_for_a_lock(store::Database& db) {
  return db.prepare("SELECT EXISTS (SELECT 1 FROM pg_locks WHERE NOT granted)").single_int64() != 0;
}

// Commits `open` once another connection waits for one of its locks (2 s
// at the most): that connection's wait then ends.
void commit_when_waited_for(test::TempDb& temp, store::WriteTransaction& open) {
  auto waited = std::chrono::steady_clock::now();
  while (!a_connection_waits_for_a_lock(temp.db) && std::chrono::steady_clock::now() - waited < 2s)
    std::this_thread::yield();
  CHECK(a_connection_waits_for_a_lock(temp.db));
  open.commit();
}

}  // namespace

TEST_CASE("two hosts record their attempts' ends at once, and both ends are counted" *
          doctest::test_suite("postgresql")) {
  test::TempDb temp;
  auto first = start(temp.db, queued_run(temp.db, "a"));
  auto second = start(temp.db, queued_run(temp.db, "b"));
  auto other = another_connection(temp);
  const std::vector<sched::AttemptEnd> firsts{first};
  store::WriteTransaction open(temp.db, store::WriteScope::rows);
  REQUIRE(sched::record_attempt_ends_within(temp.db, firsts, at(10, 1)).value().current == std::vector<bool>{true});
  // While the first is open: neither the write lock nor the counters keep it waiting.
  CHECK(sched::record_attempt_end(other, second, at(10, 1)).value().current);
  open.commit();
  CHECK(store::history_size(temp.db).value().runs == 2);
  auto ended = store::ended_runs_by_status(temp.db).value();
  REQUIRE(ended.size() == 1);
  CHECK(ended.front().name == "succeeded");
  CHECK(ended.front().count == 2);
}

TEST_CASE("a claim waits for another host's claim in the same capped group, then finds it full" *
          doctest::test_suite("postgresql")) {
  test::TempDb temp;
  REQUIRE(store::set_group_concurrency(temp.db, "g", 1, at(9, 0)));
  auto first = queued_run(temp.db, "a", "g");
  auto second = queued_run(temp.db, "b", "g");
  store::WriteTransaction open(temp.db, store::WriteScope::rows);
  auto claimed = store::next_queued_runs(temp.db, at(10, 0), 1, "here").value();
  REQUIRE(claimed.size() == 1);
  REQUIRE(claimed.front().id == first.run_id);
  REQUIRE(store::lock_groups_of(temp.db, {first.task.id}));
  start(temp.db, first);
  // The other host's claim passes over the task this one holds, and counts
  // the group's running runs only once this claim has committed.
  auto other_claim = std::async(std::launch::async, [&temp] {
    auto other = another_connection(temp);
    return store::write(other, [&]() -> core::Result<std::optional<store::TaskToClaim>> {
      auto queued = TRY(store::next_queued_runs(other, at(10, 0), 1, "here"));
      if (queued.empty()) return std::optional<store::TaskToClaim>();
      const auto& run = queued.front();
      TRY(store::lock_groups_of(other, {run.task_id}));
      return store::find_task_to_claim(other, run.id, run.task_id, at(10, 0), "here");
    }, store::WriteScope::rows);
  });
  commit_when_waited_for(temp, open);
  auto found = other_claim.get().value();
  REQUIRE(found);
  CHECK(found->task->id == second.task.id);
  CHECK_FALSE(found->claimable);
}

TEST_CASE("a tick and a claim that pass over a task another host holds wait for it, then take it" *
          doctest::test_suite("postgresql")) {
  test::TempDb temp;
  auto held = queued_run(temp.db, "a");
  store::WriteTransaction open(temp.db, store::WriteScope::rows);
  REQUIRE(store::lock_tasks_and_followers(temp.db, {held.task.id}));
  struct Seen {
    std::size_t due_before = 0, queued_before = 0;
    bool due_held = false, run_held = false;
    std::size_t due_after = 0, queued_after = 0;
  };
  auto other_host = std::async(std::launch::async, [&temp] {
    auto other = another_connection(temp);
    Seen seen;
    auto now = at(10, 0);
    seen.due_before = store::due_tasks(other, now, 10).value().size();
    seen.queued_before = store::next_queued_runs(other, now, 10, "here").value().size();
    seen.run_held = store::wait_for_held_claimable_run(other, now, "here").value();
    seen.due_held = store::wait_for_held_due_task(other, now).value();
    seen.due_after = store::due_tasks(other, now, 10).value().size();
    seen.queued_after = store::next_queued_runs(other, now, 10, "here").value().size();
    return seen;
  });
  commit_when_waited_for(temp, open);
  auto seen = other_host.get();
  CHECK(seen.due_before == 0);
  CHECK(seen.queued_before == 0);
  CHECK(seen.run_held);
  CHECK(seen.due_held);
  CHECK(seen.due_after == 1);
  CHECK(seen.queued_after == 1);
}

TEST_CASE("a renewal passes over a run whose row another host holds, without waiting for it, and says so" *
          doctest::test_suite("postgresql")) {
  test::TempDb temp;
  auto held = queued_run(temp.db, "a");
  auto free = queued_run(temp.db, "b");
  start(temp.db, held);
  start(temp.db, free);
  auto lease_of = [&temp](std::int64_t run_id) {
    auto running = store::running_runs(temp.db).value();
    auto run = std::ranges::find(running, run_id, &store::InFlightRun::id);
    REQUIRE(run != running.end());
    return run->lease_expires_at;
  };
  auto held_lease = lease_of(held.run_id);
  auto other = another_connection(temp);
  store::WriteTransaction open(other, store::WriteScope::rows);
  auto lock = other.prepare("SELECT 1 FROM runs WHERE id = ? FOR UPDATE");
  lock.bind(1, held.run_id);
  REQUIRE(lock.single_int64() == 1);
  auto renewing = std::async(std::launch::async, [&] {
    return store::renew_leases(temp.db, {{held.run_id, "uid-a"}, {free.run_id, "uid-b"}}, at(11, 0));
  });
  bool waited = renewing.wait_for(1s) != std::future_status::ready;
  open.commit();  // a renewal that waits for it goes on
  CHECK_FALSE(waited);
  auto renewed = renewing.get().value();
  REQUIRE(renewed.size() == 2);
  std::ranges::sort(renewed, {}, &store::RenewedLease::run_id);
  CHECK((renewed[0].run_id == held.run_id && renewed[0].held));
  CHECK((renewed[1].run_id == free.run_id && !renewed[1].held));
  CHECK(lease_of(held.run_id) == held_lease);
  CHECK(lease_of(free.run_id) == at(11, 0) + 10s);
}

TEST_CASE("a wait for a task another host holds ends as busy after the session's lock wait, and the session goes on" *
          doctest::test_suite("postgresql")) {
  test::TempDb temp;
  auto held = queued_run(temp.db, "a");
  auto other = another_connection(temp);
  store::bound_session(other, {.lock_wait = 200ms, .idle_in_transaction = 1s});
  store::WriteTransaction open(temp.db, store::WriteScope::rows);
  REQUIRE(store::lock_tasks_and_followers(temp.db, {held.task.id}));
  auto began = std::chrono::steady_clock::now();
  auto waited = store::wait_for_held_claimable_run(other, at(10, 0), "here");
  auto took = std::chrono::steady_clock::now() - began;
  open.commit();
  REQUIRE_FALSE(waited);
  CHECK(waited.error().kind == core::ErrorKind::busy);
  CHECK(took < 2s);
  CHECK(store::wait_for_held_claimable_run(other, at(10, 0), "here").value());  // let go: the same session goes on
}
