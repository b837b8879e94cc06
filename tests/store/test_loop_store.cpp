#include <doctest/doctest.h>

#include "../unit/test_helpers.hpp"
#include "store/runs.hpp"
#include "store/tasks.hpp"
#include "store/workers.hpp"
#include "temp_db.hpp"

using namespace taskd;
using namespace std::chrono_literals;
using test::at;

TEST_CASE("upcoming times are the earliest next run of an active task and the earliest later not_before") {
  test::TempDb temp;
  auto soon = test::add_task(temp.db, test::every_definition("soon", 60s), at(10, 0));
  auto later = test::add_task(temp.db, test::every_definition("later", 1h), at(10, 0));
  auto upcoming = store::upcoming_after(temp.db, at(10, 0), "here").value();
  CHECK(upcoming.next_due == std::min(*soon.state.next_run_at, *later.state.next_run_at));
  CHECK_FALSE(upcoming.next_claimable);

  REQUIRE(store::insert_queued_run(temp.db, later, at(10, 0), core::Trigger::schedule, at(10, 0), at(10, 0, 42)));
  CHECK(store::upcoming_after(temp.db, at(10, 0), "here").value().next_claimable == at(10, 0, 42));
  CHECK_FALSE(store::upcoming_after(temp.db, at(10, 0, 42), "here").value().next_claimable);  // not after: claimable now
}

TEST_CASE("the earliest lease of a running run is upcoming, whether it ended or not") {
  test::TempDb temp;
  auto task = test::add_task(temp.db, test::every_definition("t", 1h), at(10, 0));
  CHECK_FALSE(store::upcoming_after(temp.db, at(10, 0), "here").value().earliest_lease_end);
  auto run_id = store::insert_queued_run(temp.db, task, at(10, 0), core::Trigger::schedule, at(10, 0)).value();
  store::StartRecord start{run_id, "uid", 1, 1, at(10, 0), at(11, 0), at(10, 1), {"here", "boot", 1, 2}};
  REQUIRE(store::mark_running(temp.db, start, task.id, task.state, at(10, 0)).value());
  CHECK(store::upcoming_after(temp.db, at(10, 0), "here").value().earliest_lease_end == at(10, 1));
  CHECK(store::upcoming_after(temp.db, at(10, 5), "here").value().earliest_lease_end == at(10, 1));
}

TEST_CASE("paused and disabled tasks are not upcoming") {
  test::TempDb temp;
  auto paused = test::add_task(temp.db, test::every_definition("paused", 60s), at(10, 0));
  auto disabled = test::add_task(temp.db, test::every_definition("disabled", 60s), at(10, 0));
  REQUIRE(store::insert_queued_run(temp.db, paused, at(10, 0), core::Trigger::schedule, at(10, 0), at(10, 0, 5)));
  paused.state.paused = true;
  disabled.state.disabled_until_update = true;
  REQUIRE(store::save_state(temp.db, paused.id, paused.state, at(10, 0)));
  REQUIRE(store::save_state(temp.db, disabled.id, disabled.state, at(10, 0)));
  auto upcoming = store::upcoming_after(temp.db, at(10, 0), "here").value();
  CHECK_FALSE(upcoming.next_due);
  CHECK_FALSE(upcoming.next_claimable);
}

TEST_CASE("data_version changes with another connection's commit, not with our own") {
  test::TempDb temp;
  auto before = store::data_version(temp.db).value();
  test::add_task(temp.db, test::every_definition("own", 60s), at(10, 0));
  CHECK(store::data_version(temp.db).value() == before);
  auto other = store::Database::open(temp.location).value();
  test::add_task(other, test::every_definition("other", 60s), at(10, 0));
  CHECK(store::data_version(temp.db).value() != before);
}

TEST_CASE("the tick's probe tells a due task, a running run, a claimable run and a worker row apart") {
  test::TempDb temp;
  auto probe = [&](core::Time now) { return store::tick_work(temp.db, now).value(); };
  auto idle = probe(at(10, 0));
  CHECK_FALSE((idle.due || idle.running || idle.claimable || idle.workers));

  auto task = test::add_task(temp.db, test::every_definition("a", 60s), at(10, 0));
  CHECK_FALSE(probe(at(10, 0)).due);
  CHECK(probe(*task.state.next_run_at).due);

  auto run_id =
      store::insert_queued_run(temp.db, task, at(10, 0), core::Trigger::schedule, at(10, 0), at(10, 0, 42)).value();
  CHECK_FALSE(probe(at(10, 0, 41)).claimable);  // its jitter has not passed
  CHECK(probe(at(10, 0, 42)).claimable);

  store::StartRecord start{run_id, "uid-1", 1, 1, at(10, 0, 42), at(10, 1), at(10, 1, 10), {"host", "boot", 42, 7}};
  REQUIRE(store::mark_running(temp.db, start, task.id, task.state, at(10, 0, 42)).value());
  auto running = probe(at(10, 0, 42));
  CHECK((running.running && !running.claimable && !running.workers));

  REQUIRE(store::register_worker(temp.db, {0, "work", {"host", "boot", 42, 7}, 1, at(10, 0), at(10, 0)}));
  CHECK(probe(at(10, 0)).workers);
}

TEST_CASE("a host name is refused while another machine's live worker goes by it, not after a reboot") {
  test::TempDb temp;
  auto worker = [](std::string host, std::string boot, std::string machine) {
    return store::WorkerRow{0, "run", {std::move(host), std::move(boot), 42, 7}, 1, at(10, 0), at(10, 0), machine};
  };
  REQUIRE(store::register_worker(temp.db, worker("web1", "boot-a", "machine-a")));
  auto alive_since = at(9, 59, 30);

  auto other_machine = store::register_worker(temp.db, worker("web1", "boot-b", "machine-b"), alive_since);
  REQUIRE_FALSE(other_machine);
  CHECK(other_machine.error().kind == core::ErrorKind::bad_input);
  CHECK(other_machine.error().message.find("host id \"web1\" is in use by a taskd on another machine") !=
        std::string::npos);

  CHECK(store::register_worker(temp.db, worker("web1", "boot-c", "machine-a"), alive_since));  // rebooted
  CHECK(store::register_worker(temp.db, worker("web2", "boot-b", "machine-b"), alive_since));  // its own name
  CHECK(store::register_worker(temp.db, worker("web1", "boot-b", "machine-b"), at(10, 0, 1)));  // web1 went silent
  // Without machine ids the boot tells machines apart.
  REQUIRE(store::register_worker(temp.db, worker("db", "boot-a", "")));
  CHECK(store::register_worker(temp.db, worker("db", "boot-a", ""), alive_since));
  CHECK_FALSE(store::register_worker(temp.db, worker("db", "boot-z", ""), alive_since));
}
