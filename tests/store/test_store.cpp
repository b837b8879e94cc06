#include <doctest/doctest.h>

#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../unit/test_helpers.hpp"
#include "store/columns.hpp"
#include "store/sqlite.hpp"
#include "store/overview.hpp"
#include "store/runs.hpp"
#include "store/workers.hpp"
#include "temp_db.hpp"

using namespace taskd;
using namespace std::chrono_literals;
using test::at;

TEST_CASE("a new file is migrated from empty to the current schema" * doctest::test_suite("sqlite")) {
  test::TempDb temp;
  auto& sql = store::sqlite_handle(temp.db);
  CHECK(sql.execAndGet("PRAGMA user_version").getInt() == store::schema_version());
  CHECK(sql.execAndGet("PRAGMA application_id").getInt() == 0x7461736b);
  CHECK(sql.execAndGet("PRAGMA journal_mode").getString() == "wal");
  CHECK(sql.execAndGet("PRAGMA foreign_keys").getInt() == 1);
  CHECK(sql.tableExists("tasks"));
  CHECK(sql.tableExists("runs"));
}

TEST_CASE("a new database is 0600 in a new 0700 directory" * doctest::test_suite("sqlite")) {
  test::TempDir dir;
  auto path = dir.path() / "state" / "taskd" / "taskd.db";
  auto db = store::Database::open(path);
  REQUIRE(db);
  struct stat file {};
  struct stat parent {};
  REQUIRE(::stat(path.c_str(), &file) == 0);
  REQUIRE(::stat(path.parent_path().c_str(), &parent) == 0);
  CHECK((file.st_mode & 0777) == 0600);
  CHECK((parent.st_mode & 0777) == 0700);
  CHECK(store::check_safe_to_run(*db));
  ::chmod(path.c_str(), 0664);
  auto loose = store::check_safe_to_run(*db);
  REQUIRE_FALSE(loose);
  CHECK(loose.error().kind == core::ErrorKind::unavailable);
  CHECK(loose.error().message.find("0664") != std::string::npos);
}

namespace {

namespace fs = std::filesystem;

// The message of the refusal to run tasks from `db`; empty when it runs them.
std::string refusal(const store::Database& db) {
  auto safe = store::check_safe_to_run(db);
  if (safe) return "";
  CHECK(safe.error().kind == core::ErrorKind::unavailable);
  return safe.error().message;
}

}  // namespace

TEST_CASE("the database file opened is judged, not the one its path leads to later" * doctest::test_suite("sqlite")) {
  test::TempDir dir;
  fs::path theirs = dir.path() / "theirs";
  fs::path mine = dir.path() / "mine";
  fs::path link = dir.path() / "db";
  REQUIRE(store::Database::open(theirs / "taskd.db"));
  REQUIRE(store::Database::open(mine / "taskd.db"));
  fs::create_directory_symlink(theirs, link);
  SUBCASE("a file that others can write") {
    fs::permissions(theirs / "taskd.db", fs::perms::others_write, fs::perm_options::add);
    auto db = store::Database::open((link / "taskd.db").string()).value();
    fs::remove(link);
    fs::create_directory_symlink(mine, link);
    auto refused = refusal(db);
    CHECK(refused.find((theirs / "taskd.db").string() + " is writable by group or others") != std::string::npos);
  }
  SUBCASE("a private file, but not the one the path leads to now") {
    auto db = store::Database::open((link / "taskd.db").string()).value();
    fs::remove(link);
    fs::create_directory_symlink(mine, link);
    CHECK(refusal(db).find("moved or replaced") != std::string::npos);
    fs::remove(link);
    fs::create_directory_symlink(theirs, link);
    CHECK(refusal(db) == "");
  }
}

TEST_CASE("a database file replaced after it was opened is refused" * doctest::test_suite("sqlite")) {
  test::TempDir dir;
  fs::path path = dir.path() / "taskd.db";
  auto db = store::Database::open(path).value();
  CHECK(refusal(db) == "");
  fs::rename(path, dir.path() / "old.db");
  REQUIRE(store::Database::open(path));
  CHECK(refusal(db).find("moved or replaced") != std::string::npos);
}

TEST_CASE("checking the database file leaves SQLite's locks on it" * doctest::test_suite("sqlite")) {
  test::TempDb temp;
  // A read: in WAL mode SQLite keeps a shared lock on the file from then on,
  // by which the last connection to close knows it may remove the WAL.
  store::sqlite_handle(temp.db).exec("SELECT count(*) FROM tasks");
  REQUIRE(store::check_safe_to_run(temp.db));
  int fd = ::open(temp.path.c_str(), O_RDWR | O_CLOEXEC);
  REQUIRE(fd >= 0);
  struct flock probe {};
  probe.l_type = F_WRLCK;
  probe.l_whence = SEEK_SET;
  REQUIRE(::fcntl(fd, F_OFD_GETLK, &probe) == 0);
  CHECK(probe.l_type != F_UNLCK);
  ::close(fd);
}

TEST_CASE("opening again leaves a current database as it is") {
  test::TempDb temp;
  test::add_task(temp.db, test::every_definition("a", 60s), at(10, 0));
  auto again = store::Database::open(temp.location);
  REQUIRE(again);
  CHECK(store::list_tasks(*again, {}).value().size() == 1);
}

TEST_CASE("a database from a newer taskd is refused" * doctest::test_suite("sqlite")) {
  test::TempDb temp;
  store::sqlite_handle(temp.db).exec("PRAGMA user_version = 999");
  auto newer = store::Database::open(temp.location);
  REQUIRE_FALSE(newer);
  CHECK(newer.error().kind == core::ErrorKind::unavailable);
  CHECK(newer.error().message.find("newer") != std::string::npos);
}

TEST_CASE("a SQLite file of another program is refused, not taken over" * doctest::test_suite("sqlite")) {
  test::TempDir dir;
  auto path = dir.path() / "other.db";
  {
    SQLite::Database other(path.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    other.exec("CREATE TABLE invoices (id INTEGER)");
  }
  auto refused = store::Database::open(path);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == core::ErrorKind::unavailable);
  CHECK(refused.error().message.find("not a taskd database") != std::string::npos);
}

TEST_CASE("a cached statement read in part does not hide another process's commits") {
  test::TempDb temp;
  test::add_task(temp.db, test::every_definition("a", 60s), at(10, 0));
  test::add_task(temp.db, test::every_definition("b", 60s), at(10, 0));
  {
    auto query = temp.db.cached("SELECT name FROM tasks ORDER BY name");
    REQUIRE(query.step());  // "b" is left unread
  }
  auto other = store::Database::open(temp.location).value();
  test::add_task(other, test::every_definition("c", 60s), at(10, 0));
  CHECK(store::list_tasks(temp.db, {}).value().size() == 3);
}

TEST_CASE("a cached statement comes back with no parameter bound") {
  test::TempDb temp;
  {
    auto query = temp.db.cached("SELECT CAST(?1 AS BIGINT) IS NULL");
    query.bind(1, 5);
    CHECK(query.single_int64() == 0);
  }
  auto again = temp.db.cached("SELECT CAST(?1 AS BIGINT) IS NULL");
  CHECK(again.single_int64() == 1);
}

TEST_CASE("a write transaction left without commit changes nothing") {
  test::TempDb temp;
  {
    store::WriteTransaction tx(temp.db, store::WriteScope::database);
    test::add_task(temp.db, test::every_definition("a", 60s), at(10, 0));
  }
  CHECK(store::list_tasks(temp.db, {}).value().empty());
  store::WriteTransaction tx(temp.db, store::WriteScope::database);  // the connection is out of the rolled back transaction
  tx.commit();
}

TEST_CASE("a task round-trips with every definition field") {
  test::TempDb temp;
  auto d = test::every_definition("sync:mail@home/box", 300s);
  d.command = {{"rsync", "-a", "a b", "$HOME"}, false};
  d.after_finish = true;
  d.phase = 17s;
  d.timeout = 90s;
  d.kill_grace = 3s;
  d.tolerance = 12s;
  d.retry = {0s, 30s};
  d.permanent_exit = {78, 64};
  d.overlap = core::Overlap::queue;
  d.owner = "me";
  d.group = "mail";
  d.priority = 5;
  d.cwd = "/tmp";
  d.env = {{"A", "1"}, {"B", "x=y"}};
  d.keep_runs = 7;
  d.limits = {.memory_max = 3LL << 30, .cpu_weight = 250, .tasks_max = 40};
  d.alert_after = core::Seconds{86400};
  auto added = test::add_task(temp.db, d, at(10, 0));
  auto found = store::find_task(temp.db, "sync:mail@home/box").value();
  REQUIRE(found);
  const auto& f = found->definition;
  CHECK(found->id == added.id);
  CHECK(f.command.argv == d.command.argv);
  CHECK(f.after_finish);
  CHECK(f.phase == 17s);
  CHECK(f.timeout == 90s);
  CHECK(f.kill_grace == 3s);
  CHECK(f.tolerance == 12s);
  CHECK(f.retry == d.retry);
  CHECK(f.permanent_exit == d.permanent_exit);
  CHECK(f.overlap == core::Overlap::queue);
  CHECK(f.owner == "me");
  CHECK(f.group == "mail");
  CHECK(f.priority == 5);
  CHECK(f.cwd == "/tmp");
  CHECK(f.env == d.env);
  CHECK(f.keep_runs == 7);
  CHECK(f.limits == d.limits);
  CHECK(f.alert_after == d.alert_after);
  CHECK(found->state.next_run_at == added.state.next_run_at);
  CHECK(found->state.accounted_until == at(10, 0));
}

TEST_CASE("a command reads back whatever its words hold, escaped or not") {
  test::TempDb temp;
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"/bin/echo", "plain", "with space", "été"}, {"sh", "-c", "echo \"quoted\" \\ back"}, {"tab\there", ""}, {}}) {
    auto d = test::every_definition(fmt::format("t{}", argv.size()), 60s);
    d.command.argv = argv;
    test::add_task(temp.db, d, at(10, 0));
    CHECK(store::find_task(temp.db, d.name).value()->definition.command.argv == argv);
    std::vector<std::vector<std::string>> listed;
    REQUIRE(store::for_each_task_headline(temp.db, {.name_glob = d.name},
                                          [&](const store::StoredTask& task) -> core::Result<void> {
                                            listed.push_back(task->definition.command.argv);
                                            return {};
                                          }));
    CHECK(listed == std::vector<std::vector<std::string>>{argv});
  }
}

TEST_CASE("a phase with milliseconds is stored as fractional seconds and read back exactly" * doctest::test_suite("sqlite")) {
  test::TempDb temp;
  for (auto phase : {core::Millis{37137}, core::Millis{1}, core::Millis{299999}, core::Millis{42000}}) {
    auto d = test::every_definition("p" + std::to_string(phase.count()), 300s);
    d.phase = phase;
    test::add_task(temp.db, d, at(10, 0));
    CHECK(store::find_task(temp.db, d.name).value()->definition.phase == phase);
  }
  auto stored = [&](std::string_view name) {
    return store::sqlite_handle(temp.db).execAndGet(fmt::format("SELECT typeof(phase) || ' ' || phase FROM tasks WHERE name = '{}'", name)).getString();
  };
  CHECK(stored("p37137") == "real 37.137");
  CHECK(stored("p42000") == "integer 42");
}

TEST_CASE("a duplicate name is bad input and changes nothing") {
  test::TempDb temp;
  test::add_task(temp.db, test::every_definition("a", 60s), at(10, 0));
  auto d = test::every_definition("a", 120s);
  auto again = store::insert_task(temp.db, d, {}, at(10, 0));
  REQUIRE_FALSE(again);
  CHECK(again.error().kind == core::ErrorKind::bad_input);
  CHECK(store::find_task(temp.db, "a").value()->definition.schedule_spec == "1m");
}

TEST_CASE("state written with a stale attempt_uid changes nothing (fencing)") {
  test::TempDb temp;
  auto task = test::add_task(temp.db, test::every_definition("a", 60s), at(10, 0));
  auto state = task.state;
  state.attempt_uid = "current";
  state.attempt_no = 1;
  REQUIRE(store::save_state(temp.db, task.id, state, at(10, 0)));
  auto stale = state;
  stale.attempt_uid = "";
  stale.attempt_no = 0;
  stale.next_run_at = at(23, 0);
  CHECK_FALSE(store::save_state_fenced(temp.db, task.id, "superseded", stale, at(10, 1)).value());
  auto kept = store::find_task(temp.db, task.id).value()->state;
  CHECK(kept.attempt_uid == "current");
  CHECK(kept.next_run_at == state.next_run_at);
  CHECK(store::save_state_fenced(temp.db, task.id, "current", stale, at(10, 1)).value());
  CHECK(store::find_task(temp.db, task.id).value()->state.next_run_at == at(23, 0));
}

TEST_CASE("a run is claimed once, its task's state written with it, and finished only by its own attempt") {
  test::TempDb temp;
  auto task = test::add_task(temp.db, test::every_definition("a", 60s), at(10, 0));
  auto run_id = store::insert_queued_run(temp.db, task, at(10, 1), core::Trigger::schedule, at(10, 1)).value();
  CHECK(store::has_active_run(temp.db, task.id).value());
  store::StartRecord start{run_id, "uid-1", 1, 1, at(10, 1), at(10, 1, 30), at(10, 1, 40), {"host", "boot", 42, 7}};
  auto claimed = task.state;
  claimed.attempt_uid = "uid-1";
  CHECK(store::mark_running(temp.db, start, task.id, claimed, at(10, 1)).value());
  CHECK(store::find_task(temp.db, task.id).value()->state.attempt_uid == "uid-1");
  start.attempt_uid = "uid-2";
  claimed.attempt_uid = "uid-2";
  CHECK_FALSE(store::mark_running(temp.db, start, task.id, claimed, at(10, 1)).value());  // a second worker loses
  CHECK(store::find_task(temp.db, task.id).value()->state.attempt_uid == "uid-1");         // and writes nothing

  store::FinishRecord stale{run_id, "uid-2", core::RunStatus::succeeded, at(10, 2), 0, std::nullopt, "", "", false};
  CHECK_FALSE(store::finish_run(temp.db, stale).value());
  CHECK(store::find_run(temp.db, run_id).value()->status == core::RunStatus::running);

  store::FinishRecord own{run_id, "uid-1", core::RunStatus::failed, at(10, 2), 3, std::nullopt, "exit code 3", "out", false};
  CHECK(store::finish_run(temp.db, own).value());
  auto run = store::find_run(temp.db, run_id).value().value();
  CHECK(run.status == core::RunStatus::failed);
  CHECK(run.exit_code == 3);
  CHECK(run.attempt_uid == "uid-1");
  CHECK(store::run_output(temp.db, run_id).value() == "out");
  CHECK_FALSE(store::has_active_run(temp.db, task.id).value());
}

TEST_CASE("a queued run and its task's state are written together") {
  test::TempDb temp;
  auto task = test::add_task(temp.db, test::every_definition("a", 60s), at(10, 0));
  auto state = task.state;
  state.next_run_at = at(10, 2);
  auto run_id =
      store::queue_run_saving_state(temp.db, task, at(10, 1), core::Trigger::schedule, at(10, 1), at(10, 1, 5), state)
          .value();
  auto run = store::find_run(temp.db, run_id).value().value();
  CHECK(run.status == core::RunStatus::queued);
  CHECK(run.scheduled_at == at(10, 1));
  CHECK(run.not_before == at(10, 1, 5));
  CHECK(store::find_task(temp.db, task.id).value()->state.next_run_at == at(10, 2));
}

TEST_CASE("due tasks come from the partial index, not a scan" * doctest::test_suite("sqlite")) {
  test::TempDb temp;
  SQLite::Statement plan(store::sqlite_handle(temp.db),
                         "EXPLAIN QUERY PLAN SELECT id FROM tasks WHERE next_run_at IS NOT NULL AND paused = 0 "
                         "AND disabled_until_update = 0 AND next_run_at <= 0 ORDER BY next_run_at LIMIT 10");
  std::string details;
  while (plan.executeStep()) details += plan.getColumn(3).getString() + ";";
  CHECK(details.find("USING INDEX tasks_due") != std::string::npos);
  CHECK(details.find("TEMP B-TREE") == std::string::npos);
}

TEST_CASE("paused and disabled tasks are never due") {
  test::TempDb temp;
  auto paused = test::add_task(temp.db, test::every_definition("paused", 60s), at(10, 0), true);
  auto disabled = test::add_task(temp.db, test::every_definition("disabled", 60s), at(10, 0), true);
  test::add_task(temp.db, test::every_definition("due", 60s), at(10, 0), true);
  auto state = paused.state;
  state.paused = true;
  REQUIRE(store::save_state(temp.db, paused.id, state, at(10, 0)));
  state = disabled.state;
  state.disabled_until_update = true;
  REQUIRE(store::save_state(temp.db, disabled.id, state, at(10, 0)));
  auto due = store::due_tasks(temp.db, at(10, 0), 10).value();
  REQUIRE(due.size() == 1);
  CHECK(due.front()->definition.name == "due");
}

TEST_CASE("check's facts: last success, alert_after, the latest planned run, due tasks, the newest heartbeat") {
  test::TempDb temp;
  auto d = test::every_definition("a", 60s);
  d.alert_after = core::Seconds{3600};
  auto task = test::add_task(temp.db, d, at(10, 0));
  test::add_task(temp.db, test::every_definition("b", 60s), at(10, 0));
  auto planned = store::insert_queued_run(temp.db, task, at(10, 1), core::Trigger::schedule, at(10, 1), at(10, 1, 5));
  REQUIRE(planned);
  store::StartRecord start{*planned, "uid", 1, 1, at(10, 3), at(10, 4), at(10, 5), {"host", "boot", 42, 7}};
  REQUIRE(store::mark_running(temp.db, start, task.id, task.state, at(10, 3)).value());
  REQUIRE(store::insert_queued_run(temp.db, task, at(10, 6), core::Trigger::manual, at(10, 6)));  // left out
  auto state = store::find_task(temp.db, task.id).value()->state;
  state.last_succeeded_at = at(10, 4);
  REQUIRE(store::save_state(temp.db, task.id, state, at(10, 4)));

  std::vector<core::TaskFacts> facts;
  REQUIRE(store::for_each_task_facts(temp.db, {}, [&facts](const core::TaskFacts& f) { facts.push_back(f); }));
  REQUIRE(facts.size() == 2);
  CHECK(facts[0].name == "a");
  CHECK(facts[0].alert_after == core::Seconds{3600});
  CHECK(facts[0].last_succeeded_at == at(10, 4));
  CHECK(facts[0].created_at == at(10, 0));
  CHECK(facts[0].run_not_before == at(10, 1, 5));
  CHECK(facts[0].run_started_at == at(10, 3));
  CHECK_FALSE(facts[1].run_not_before);
  auto successes = store::last_successes(temp.db).value();
  REQUIRE(successes.size() == 1);
  CHECK((successes[0].name == "a" && successes[0].time == at(10, 4)));

  CHECK(store::count_due_tasks(temp.db, at(10, 0)).value() == 0);
  CHECK(store::count_due_tasks(temp.db, at(11, 0)).value() == 2);
  state.paused = true;
  REQUIRE(store::save_state(temp.db, task.id, state, at(10, 4)));
  CHECK(store::count_due_tasks(temp.db, at(11, 0)).value() == 1);

  CHECK(store::newest_heartbeat(temp.db, "run").value() == std::nullopt);
  const std::vector<std::pair<std::string, core::Time>> workers{{"run", at(10, 5)}, {"run", at(10, 7)},
                                                                 {"work", at(10, 9)}};
  for (const auto& [role, heartbeat] : workers) {
    store::WorkerRow worker{.role = role, .identity = {"elsewhere", "boot", 77, 1}, .started_at = at(10, 0),
                            .heartbeat_at = heartbeat};
    REQUIRE(store::register_worker(temp.db, worker));
  }
  CHECK(store::newest_heartbeat(temp.db, "run").value() == at(10, 7));
}

TEST_CASE("removing a task removes its history") {
  test::TempDb temp;
  auto task = test::add_task(temp.db, test::every_definition("a", 60s), at(10, 0));
  REQUIRE(store::insert_queued_run(temp.db, task, at(10, 1), core::Trigger::schedule, at(10, 1)));
  CHECK(store::remove_task(temp.db, task.id).value() == 1);
  CHECK(store::list_runs(temp.db, 0, 10).value().empty());
}

TEST_CASE("history is bounded per task, and unfinished runs are never pruned") {
  test::TempDb temp;
  auto task = test::add_task(temp.db, test::every_definition("a", 60s), at(10, 0));
  auto other = test::add_task(temp.db, test::every_definition("b", 60s), at(10, 0));
  auto queued = store::insert_queued_run(temp.db, task, at(9, 0), core::Trigger::schedule, at(9, 0)).value();
  for (int i = 0; i < 5; ++i) {
    REQUIRE(store::insert_skipped_run(temp.db, task.id, {1, at(10, i), at(10, i), "skipped"}, at(10, i)));
    REQUIRE(store::insert_skipped_run(temp.db, other.id, {1, at(10, i), at(10, i), "skipped"}, at(10, i)));
  }
  CHECK(store::prune_history(temp.db, task.id, 3).value() == 2);
  auto kept = store::list_runs(temp.db, task.id, 100).value();
  REQUIRE(kept.size() == 4);
  CHECK(kept[0].scheduled_at == at(10, 4));
  CHECK(kept[2].scheduled_at == at(10, 2));
  CHECK(kept[3].id == queued);
  CHECK(store::list_runs(temp.db, other.id, 100).value().size() == 5);
  CHECK(store::prune_history(temp.db, task.id, 3).value() == 0);
}

TEST_CASE("a run's end writes its task's state only when it ends the run, and prunes the history either way") {
  test::TempDb temp;
  auto task = test::add_task(temp.db, test::every_definition("a", 60s), at(10, 0));
  for (int i = 0; i < 3; ++i)
    REQUIRE(store::insert_skipped_run(temp.db, task.id, {1, at(9, i), at(9, i), "skipped"}, at(9, i)));
  auto run_id = store::insert_queued_run(temp.db, task, at(10, 1), core::Trigger::schedule, at(10, 1)).value();
  store::StartRecord start{run_id, "uid-1", 1, 1, at(10, 1), at(10, 2), at(10, 3), {"host", "boot", 42, 7}};
  REQUIRE(store::mark_running(temp.db, start, task.id, task.state, at(10, 1)).value());
  auto ended = task.state;
  ended.last_status = core::RunStatus::succeeded;

  store::FinishRecord stale{run_id, "uid-0", core::RunStatus::succeeded, at(10, 2), 0, std::nullopt, "", "", false};
  CHECK_FALSE(store::finish_run_saving_state(temp.db, stale, task.id, ended, 3, at(10, 2)).value());
  CHECK_FALSE(store::find_task(temp.db, task.id).value()->state.last_status);
  CHECK(store::list_runs(temp.db, task.id, 100).value().size() == 3);  // the oldest skipped row went

  store::FinishRecord own{run_id, "uid-1", core::RunStatus::succeeded, at(10, 2), 0, std::nullopt, "", "out", false};
  CHECK(store::finish_run_saving_state(temp.db, own, task.id, ended, 1, at(10, 2)).value());
  CHECK(store::find_task(temp.db, task.id).value()->state.last_status == core::RunStatus::succeeded);
  auto kept = store::list_runs(temp.db, task.id, 100).value();
  REQUIRE(kept.size() == 1);  // the run it ended, the newest
  CHECK(kept[0].id == run_id);
  CHECK(kept[0].status == core::RunStatus::succeeded);
}

TEST_CASE("only a name taken is a duplicate: another constraint's failure is not reported as one") {
  test::TempDb temp;
  test::add_task(temp.db, test::every_definition("a", 60s), at(10, 0));
  auto again = store::insert_task(temp.db, test::every_definition("a", 60s), {}, at(10, 0));
  REQUIRE_FALSE(again);
  CHECK(again.error().kind == core::ErrorKind::bad_input);
  CHECK(again.error().message.find("already exists") != std::string::npos);

  auto broken = test::every_definition("b", 60s);
  broken.keep_runs = 0;  // CHECK (keep_runs >= 1)
  auto refused = store::insert_task(temp.db, broken, {}, at(10, 0));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == core::ErrorKind::internal);
  CHECK(refused.error().message.find("already exists") == std::string::npos);
}
