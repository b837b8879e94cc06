#include <doctest/doctest.h>

#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <unistd.h>

#include "../unit/test_helpers.hpp"
#include "exec/process_identity.hpp"
#include "exec/run_files.hpp"
#include "exec/spawn_ledger.hpp"
#include "sched/outcome.hpp"
#include "sched/presence.hpp"
#include "sched/recovery.hpp"
#include "sched/tick.hpp"
#include "sched/trigger.hpp"
#include "sched/worker.hpp"
#include "store/groups.hpp"
#include "store/runs.hpp"
#include "store/workers.hpp"
#include "temp_db.hpp"

using namespace taskd;
using namespace std::chrono_literals;
using test::at;

namespace {

class FakeClock final : public sched::Clock {
 public:
  explicit FakeClock(core::Time now) : now_(now) {}
  core::Time now() const override { return now_; }
  void advance(core::Millis by) { now_ += by; }

 private:
  core::Time now_;
};

std::string env_value(const exec::SpawnRequest& request, const std::string& name) {
  for (const auto& entry : request.env) {
    if (entry.starts_with(name + "=")) return entry.substr(name.size() + 1);
  }
  return "<unset>";
}

// Records what would run; every child "runs" for `duration` of fake time and
// ends as `outcome_for` says (exit 0 by default).
class FakeRunner final : public exec::Runner {
 public:
  explicit FakeRunner(FakeClock& clock) : clock_(clock) {}

  std::vector<exec::SpawnRequest> started;
  std::size_t most_at_once = 0;
  core::Millis duration = 1s;
  std::function<exec::ChildResult(const exec::SpawnRequest&)> outcome_for = [](const exec::SpawnRequest&) {
    exec::ChildResult result;
    result.exit_code = 0;
    result.output = "ok\n";
    return result;
  };
  std::function<void()> while_running = [] {};

  core::Result<exec::StartedProcess> start(std::uint64_t key, const exec::SpawnRequest& request,
                                           const exec::ChildLimits&) override {
    if (request.argv.front() == "/missing")
      return core::fail(core::ErrorKind::bad_input, "cannot execute \"/missing\": not found");
    started.push_back(request);
    running_[key] = request;
    if (request.ledger_fd >= 0) {  // as a real child does before it executes
      auto line = fmt::format("{} {}\n", request.ledger_tag, 1000 + key);
      REQUIRE(::write(request.ledger_fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()));
    }
    most_at_once = std::max(most_at_once, running_.size());
    return exec::StartedProcess{static_cast<pid_t>(1000 + key), 4711};
  }

  std::vector<exec::ChildResult> wait_for_exits(exec::SteadyTime) override {
    while_running();
    clock_.advance(duration);
    std::vector<exec::ChildResult> ended;
    for (const auto& [key, request] : running_) {
      auto result = outcome_for(request);
      result.key = key;
      ended.push_back(result);
    }
    running_.clear();
    return ended;
  }

  void finish_lingering() override {}
  void hold_lease(std::uint64_t, exec::SteadyTime) override {}
  std::optional<exec::SteadyTime> next_lease_action() const override { return std::nullopt; }
  std::optional<exec::OutputSoFar> output_so_far(std::uint64_t) const override { return std::nullopt; }
  std::size_t running() const override { return running_.size(); }

 private:
  FakeClock& clock_;
  std::map<std::uint64_t, exec::SpawnRequest> running_;
};

struct Fixture {
  test::TempDb temp;
  FakeClock clock{at(10, 0)};
  FakeRunner runner{clock};
  sched::WorkerOptions options = [] {
    sched::WorkerOptions o;
    o.concurrency = 4;
    return o;
  }();

  std::vector<sched::RunReport> tick_and_work() {
    REQUIRE(sched::enqueue_due(temp.db, clock.now()));
    return sched::work_until_idle(temp.db, clock, runner, options).value();
  }
  core::Task task(const std::string& name) { return store::find_task(temp.db, name).value().value(); }
  std::vector<store::RunRecord> runs() { return store::list_runs(temp.db, 0, 1000).value(); }
};

}  // namespace

TEST_CASE("a due task is queued once however often the tick runs") {
  Fixture f;
  test::add_task(f.temp.db, test::every_definition("a", 60s), at(10, 0), true);
  CHECK(sched::enqueue_due(f.temp.db, at(10, 0))->enqueued == 1);
  CHECK(sched::enqueue_due(f.temp.db, at(10, 0))->enqueued == 0);
  CHECK(f.runs().size() == 1);
}

TEST_CASE("a task of @reboot is queued once at each boot of its host, not under the boot it was kept under") {
  Fixture f;
  auto d = test::every_definition("boot", 60s);
  d.schedule_kind = core::ScheduleKind::cron;
  d.schedule_spec = "@reboot";
  auto here = test::add_task(f.temp.db, d, at(10, 0));
  REQUIRE(store::set_task_boot(f.temp.db, here.id, "boot-a"));
  d.name = "elsewhere";
  d.on_host = "web2";
  auto elsewhere = test::add_task(f.temp.db, d, at(10, 0));
  REQUIRE(store::set_task_boot(f.temp.db, elsewhere.id, "boot-a"));
  d.name = "unseen";
  d.on_host = "web1";
  test::add_task(f.temp.db, d, at(10, 0));  // added from another machine: under no boot yet
  auto tick = [&](std::string_view boot, core::Time now) {
    REQUIRE(store::make_due_at_boot(f.temp.db, "web1", boot, now));
    return sched::enqueue_due(f.temp.db, now).value().enqueued;
  };
  CHECK(tick("boot-a", at(10, 1)) == 0);  // the boot it was added under, and a first sight of "unseen"
  CHECK(tick("boot-b", at(10, 2)) == 2);  // a boot: "boot" and "unseen", not web2's task
  CHECK(tick("boot-b", at(10, 3)) == 0);  // a restart on the same boot
  CHECK(f.task("boot").state.next_run_at == std::nullopt);
  CHECK(f.runs().size() == 2);
  CHECK(tick("", at(10, 4)) == 0);  // a machine that tells no boot runs none
}

TEST_CASE("run-once runs what is due and records success") {
  Fixture f;
  auto added = test::add_task(f.temp.db, test::every_definition("a", 60s), at(10, 0), true);
  auto reports = f.tick_and_work();
  REQUIRE(reports.size() == 1);
  CHECK(reports.front().status == core::RunStatus::succeeded);
  auto runs = f.runs();
  REQUIRE(runs.size() == 1);
  CHECK(runs.front().status == core::RunStatus::succeeded);
  CHECK(runs.front().exit_code == 0);
  CHECK(runs.front().started_at == at(10, 0));
  CHECK(runs.front().finished_at == at(10, 0, 1));
  CHECK(store::run_output(f.temp.db, runs.front().id).value() == "ok\n");
  auto task = f.task("a");
  CHECK(task.state.attempt_no == 0);
  CHECK(task.state.run_index == 1);
  CHECK(task.state.last_status == core::RunStatus::succeeded);
  CHECK(task.state.next_run_at == core::next_slot_after(core::schedule_of(added.definition).value(), at(10, 0, 1)));
}

TEST_CASE("the child gets the TASKD_* environment of its attempt") {
  Fixture f;
  auto d = test::every_definition("env", 60s);
  d.env = {{"GREETING", "hello"}};
  test::add_task(f.temp.db, d, at(10, 0), true);
  f.tick_and_work();
  REQUIRE(f.runner.started.size() == 1);
  const auto& request = f.runner.started.front();
  auto run = f.runs().front();
  CHECK(env_value(request, "TASKD_TASK") == "env");
  CHECK(env_value(request, "TASKD_RUN_ID") == std::to_string(run.id));
  CHECK(env_value(request, "TASKD_ATTEMPT_UID") == run.attempt_uid);
  CHECK(run.attempt_uid.size() == 32);
  CHECK(env_value(request, "TASKD_ATTEMPT_NO") == "1");
  CHECK(env_value(request, "TASKD_RUN_INDEX") == "1");
  CHECK(env_value(request, "TASKD_SCHEDULED_AT") == "2026-11-21T10:00:00Z");
  CHECK(env_value(request, "TASKD_DEADLINE") == std::to_string(core::to_unix_ms(at(10, 0, 30)) / 1000));
  CHECK(env_value(request, "TASKD_STATE") != "<unset>");
  CHECK(env_value(request, "TASKD_STATUS") != "<unset>");
  CHECK(env_value(request, "GREETING") == "hello");
}

TEST_CASE(
    "each child is started with the worker's spawn ledger, emptied once its pid is in the run, removed at the end") {
  Fixture f;
  test::add_task(f.temp.db, test::every_definition("ledgered", 60s), at(10, 0), true);
  auto ledger = exec::spawn_ledger_path(f.temp.db.local_stem(), ::getpid(), exec::process_start_ticks(::getpid()));
  std::vector<std::uintmax_t> ledger_size_while_running;
  f.runner.while_running = [&] {
    REQUIRE(f.runner.started.back().ledger_fd >= 0);
    ledger_size_while_running.push_back(std::filesystem::file_size(ledger));
  };
  f.tick_and_work();
  REQUIRE(f.runner.started.size() == 1);
  CHECK(f.runner.started.front().ledger_tag == f.runs().front().attempt_uid);
  CHECK(ledger_size_while_running == std::vector<std::uintmax_t>{0});
  CHECK_FALSE(std::filesystem::exists(ledger));
}

TEST_CASE("no more children run at once than the concurrency allows, and all run") {
  Fixture f;
  f.options.concurrency = 2;
  for (int i = 0; i < 5; ++i) test::add_task(f.temp.db, test::every_definition("t" + std::to_string(i), 60s), at(10, 0), true);
  auto reports = f.tick_and_work();
  CHECK(reports.size() == 5);
  CHECK(f.runner.started.size() == 5);
  CHECK(f.runner.most_at_once == 2);
}

TEST_CASE("higher priority runs are claimed first") {
  Fixture f;
  f.options.concurrency = 1;
  auto low = test::every_definition("low", 60s);
  auto high = test::every_definition("high", 60s);
  high.priority = 10;
  test::add_task(f.temp.db, low, at(10, 0), true);
  test::add_task(f.temp.db, high, at(10, 0), true);
  f.tick_and_work();
  REQUIRE(f.runner.started.size() == 2);
  CHECK(env_value(f.runner.started[0], "TASKD_TASK") == "high");
}

TEST_CASE("a follower whose own run ends with its upstream's, in one batch, runs again after it") {
  Fixture f;
  test::add_task(f.temp.db, test::every_definition("upstream", 1h), at(10, 0), true);
  auto follower = test::every_definition("follower", 1h);
  follower.after = {"upstream", false};
  test::add_task(f.temp.db, follower, at(10, 0), true);
  f.tick_and_work();  // both start at 10:00 and their ends are recorded together
  std::vector<std::pair<std::string, core::RunStatus>> runs;
  for (const auto& run : f.runs()) runs.emplace_back(run.task, run.status);
  // The follower's run had ended: the upstream's success queued (and the worker ran) the next.
  CHECK(runs == std::vector<std::pair<std::string, core::RunStatus>>{{"follower", core::RunStatus::succeeded},
                                                                      {"follower", core::RunStatus::succeeded},
                                                                      {"upstream", core::RunStatus::succeeded}});
}

TEST_CASE("a program that cannot be executed is a failed run whose reason says so") {
  Fixture f;
  auto d = test::every_definition("missing", 60s);
  d.command = {{"/missing"}, false};
  test::add_task(f.temp.db, d, at(10, 0), true);
  auto reports = f.tick_and_work();
  REQUIRE(reports.size() == 1);
  CHECK(reports.front().status == core::RunStatus::failed);
  auto run = f.runs().front();
  CHECK(run.status == core::RunStatus::failed);
  CHECK(run.reason.find("cannot execute") != std::string::npos);
  CHECK(f.task("missing").state.attempt_no == 1);
}

TEST_CASE("a failed exit code walks the retry ladder; exit 78 disables with the child's reason") {
  Fixture f;
  test::add_task(f.temp.db, test::every_definition("flaky", 1h), at(10, 0), true);
  test::add_task(f.temp.db, test::every_definition("broken", 1h), at(10, 0), true);
  f.runner.outcome_for = [](const exec::SpawnRequest& request) {
    exec::ChildResult result;
    bool broken = env_value(request, "TASKD_TASK") == "broken";
    result.exit_code = broken ? 78 : 3;
    result.output = broken ? "Provided URL is invalid: https://example.com/broken\n" : "oops\n";
    return result;
  };
  f.tick_and_work();
  auto flaky = f.task("flaky");
  CHECK(flaky.state.attempt_no == 1);
  CHECK(flaky.state.next_run_at == at(10, 0, 1));  // the ladder's first step: 0s
  CHECK_FALSE(flaky.state.disabled_until_update);
  auto broken = f.task("broken");
  CHECK(broken.state.disabled_until_update);
  CHECK(broken.state.disabled_reason == "Provided URL is invalid: https://example.com/broken");
  CHECK_FALSE(broken.state.next_run_at);
}

TEST_CASE("an outcome from a superseded attempt is recorded in history but leaves the task alone") {
  Fixture f;
  auto task = test::add_task(f.temp.db, test::every_definition("a", 60s), at(10, 0), true);
  f.runner.while_running = [&] {
    // Another process recovered the run and started a new attempt meanwhile.
    auto current = f.task("a");
    current.state.attempt_uid = "newer-attempt";
    current.state.attempt_no = 7;
    REQUIRE(store::save_state(f.temp.db, task.id, current.state, f.clock.now()));
  };
  auto reports = f.tick_and_work();
  REQUIRE(reports.size() == 1);
  CHECK(reports.front().reason.find("no longer the task's current one") != std::string::npos);
  auto after = f.task("a");
  CHECK(after.state.attempt_uid == "newer-attempt");
  CHECK(after.state.attempt_no == 7);
  CHECK_FALSE(after.state.last_status);
}

TEST_CASE("with overlap=queue a second queued run too soon after the first is dropped") {
  Fixture f;
  auto d = test::every_definition("q", 60s);
  d.overlap = core::Overlap::queue;
  auto task = test::add_task(f.temp.db, d, at(10, 0), true);
  // The previous slot's run, still queued (each slot is queued once).
  REQUIRE(store::insert_queued_run(f.temp.db, task, at(9, 59), core::Trigger::schedule, at(10, 0)));
  f.options.concurrency = 1;
  auto reports = f.tick_and_work();
  REQUIRE(reports.size() == 2);
  CHECK(reports[0].status == core::RunStatus::succeeded);
  CHECK(reports[1].status == core::RunStatus::dropped);
  CHECK(reports[1].reason.find("tolerance") != std::string::npos);
}

TEST_CASE("runs of a paused task stay queued") {
  Fixture f;
  auto task = test::add_task(f.temp.db, test::every_definition("p", 60s), at(10, 0), true);
  REQUIRE(sched::enqueue_due(f.temp.db, at(10, 0)));
  auto state = f.task("p").state;
  state.paused = true;
  REQUIRE(store::save_state(f.temp.db, task.id, state, at(10, 0)));
  CHECK(sched::work_until_idle(f.temp.db, f.clock, f.runner, f.options).value().empty());
  CHECK(f.runs().front().status == core::RunStatus::queued);
}

TEST_CASE("a jittered run is not claimed before its delay has passed") {
  Fixture f;
  auto d = test::every_definition("jittery", 1h);
  d.jitter = 10min;
  d.phase = 0s;
  test::add_task(f.temp.db, d, at(9, 30));
  f.clock = FakeClock(at(10, 0));
  CHECK(f.tick_and_work().empty());
  auto delay = core::jitter_delay(d, 1);
  REQUIRE(delay > 0s);
  f.clock.advance(delay - 1s);
  CHECK(sched::work_until_idle(f.temp.db, f.clock, f.runner, f.options).value().empty());
  f.clock.advance(1s);
  CHECK(sched::work_until_idle(f.temp.db, f.clock, f.runner, f.options).value().size() == 1);
  auto run = f.runs().front();
  CHECK(run.scheduled_at == at(10, 0));
  CHECK(run.started_at == at(10, 0) + delay);
}

TEST_CASE("no run is claimed after --max-time") {
  Fixture f;
  test::add_task(f.temp.db, test::every_definition("late", 60s), at(10, 0), true);
  f.options.claim_until = at(10, 0);
  CHECK(f.tick_and_work().empty());
  CHECK(f.runs().front().status == core::RunStatus::queued);
}

TEST_CASE("what the child writes to $TASKD_STATE is kept for its next run") {
  Fixture f;
  auto task = test::add_task(f.temp.db, test::every_definition("cursor", 60s), at(10, 0), true);
  f.runner.outcome_for = [](const exec::SpawnRequest& request) {
    std::FILE* state = std::fopen(env_value(request, "TASKD_STATE").c_str(), "w");
    std::fputs("page=7", state);
    std::fclose(state);
    exec::ChildResult result;
    result.exit_code = 0;
    return result;
  };
  f.tick_and_work();
  CHECK(store::find_task_to_claim(f.temp.db, 0, task.id, at(10, 0), "").value()->state_blob == "page=7");
}

TEST_CASE("a run's files are removed when it ends, the run directory when the worker is done") {
  Fixture f;
  f.options.concurrency = 1;
  test::add_task(f.temp.db, test::every_definition("first", 60s), at(10, 0), true);
  test::add_task(f.temp.db, test::every_definition("second", 60s), at(10, 0), true);
  std::vector<bool> files_of_the_first_left;
  f.runner.while_running = [&] {
    auto first_state = env_value(f.runner.started.front(), "TASKD_STATE");
    REQUIRE(std::filesystem::exists(std::filesystem::path(first_state).parent_path()));
    files_of_the_first_left.push_back(std::filesystem::exists(first_state) ||
                                      std::filesystem::exists(env_value(f.runner.started.front(), "TASKD_STATUS")));
  };
  f.tick_and_work();
  REQUIRE(f.runner.started.size() == 2);
  CHECK(files_of_the_first_left == std::vector<bool>{true, false});
  auto first_state = env_value(f.runner.started.front(), "TASKD_STATE");
  auto second_state = env_value(f.runner.started.back(), "TASKD_STATE");
  CHECK(first_state != second_state);
  CHECK(std::filesystem::path(first_state).parent_path() == std::filesystem::path(second_state).parent_path());
  CHECK_FALSE(std::filesystem::exists(std::filesystem::path(first_state).parent_path()));
}

TEST_CASE("a run directory that something removed is replaced by a new one") {
  auto directory = exec::RunDirectory::create().value();
  auto first = directory.files_for(1, "page=1").value();
  auto first_dir = std::filesystem::path(first.state_path()).parent_path();
  std::filesystem::remove_all(first_dir);
  auto second = directory.files_for(2, "page=2").value();
  CHECK(std::filesystem::path(second.state_path()).parent_path() != first_dir);
  CHECK(directory.collect(std::move(second), 100).state.value() == "page=2");
}

namespace {

// Processes for recovery tests: which (pid, start) pairs live, and which
// groups recovery killed.
class FakeProcessTable final : public sched::ProcessTable {
 public:
  std::set<std::pair<pid_t, std::int64_t>> alive;
  mutable std::vector<pid_t> killed;
  mutable std::vector<pid_t> terminated;
  mutable std::vector<std::pair<std::string, pid_t>> attempts_killed;  // (token, the pid a spawn ledger told)
  std::function<void()> as_killed;  // what another process does as recovery kills a group
  bool is_running(pid_t pid, std::int64_t start_ticks) const override { return alive.contains({pid, start_ticks}); }
  void kill_group(pid_t pid, std::int64_t) const override {
    killed.push_back(pid);
    if (as_killed) as_killed();
  }
  void terminate_group(pid_t pid, std::int64_t) const override { terminated.push_back(pid); }
  void kill_attempt(const std::string& attempt_uid, pid_t spawned) const override {
    attempts_killed.emplace_back(attempt_uid, spawned);
  }
};

const store::WorkerIdentity self{"here", "boot-1", 500, 5000};

enum class ChildRecorded { yes, no };

// A task with one run RUNNING under `worker`, as a claim leaves it, and
// (unless the worker died before) the spawn after it.
std::int64_t running_under(test::TempDb& temp, const store::WorkerIdentity& worker,
                           ChildRecorded child = ChildRecorded::yes) {
  auto task = test::add_task(temp.db, test::every_definition("r", 1h), at(10, 0), true);
  auto run_id = store::insert_queued_run(temp.db, task, at(10, 0), core::Trigger::schedule, at(10, 0)).value();
  auto schedule = core::schedule_of(task.definition).value();
  auto start = core::on_start(task.definition, schedule, task.state, at(10, 0), at(10, 0), "uid-r");
  store::StartRecord record{run_id, "uid-r", 1, 1, at(10, 0), start.deadline, start.deadline + 10s, worker};
  REQUIRE(store::mark_running(temp.db, record, task.id, start.state, at(10, 0)).value());
  if (child == ChildRecorded::yes) REQUIRE(store::set_children(temp.db, {{run_id, 4242, 777}}));
  return run_id;
}

}  // namespace

TEST_CASE("a run whose worker died on this host is LOST at once, and its child's group is killed first") {
  test::TempDb temp;
  auto run_id = running_under(temp, {"here", "boot-1", 321, 3000});
  FakeProcessTable processes;
  auto lost = sched::recover_lost_runs(temp.db, at(10, 0, 5), self, processes).value();
  REQUIRE(lost.size() == 1);
  CHECK(lost.front().status == core::RunStatus::lost);
  CHECK(processes.killed == std::vector<pid_t>{4242});
  auto run = store::find_run(temp.db, run_id).value().value();
  CHECK(run.status == core::RunStatus::lost);
  CHECK(run.reason.find("worker pid 321") != std::string::npos);
  auto task = store::find_task(temp.db, "r").value().value();
  CHECK(task.state.attempt_uid.empty());
  CHECK(task.state.last_status == core::RunStatus::lost);
  CHECK(task.state.next_run_at == at(10, 0, 5));  // the ladder's first retry: 0s
  CHECK_FALSE(store::has_active_run(temp.db, task.id).value());
}

TEST_CASE("a lost run that another host records first, between this one's look and its write, is reported there only") {
  test::TempDb temp;
  auto run_id = running_under(temp, {"here", "boot-1", 321, 3000});
  sched::AttemptEnd elsewhere;
  elsewhere.run_id = run_id;
  elsewhere.task_id = store::find_task(temp.db, "r").value()->id;
  elsewhere.attempt_uid = "uid-r";
  elsewhere.outcome = core::AttemptOutcome::lost;
  elsewhere.reason = "lost: recovered by another host";
  FakeProcessTable processes;
  processes.as_killed = [&] { CHECK(sched::record_attempt_end(temp.db, elsewhere, at(10, 0, 5)).value().written); };
  CHECK(sched::recover_lost_runs(temp.db, at(10, 0, 5), self, processes).value().empty());
  CHECK(processes.killed == std::vector<pid_t>{4242});
  CHECK(store::find_run(temp.db, run_id).value()->reason == elsewhere.reason);
}

TEST_CASE("a run whose worker died before recording its child has the attempt's processes killed by its token") {
  test::TempDb temp;
  running_under(temp, {"here", "boot-1", 321, 3000}, ChildRecorded::no);
  FakeProcessTable processes;
  CHECK(sched::recover_lost_runs(temp.db, at(10, 0, 5), self, processes).value().size() == 1);
  CHECK(processes.killed.empty());
  CHECK(processes.attempts_killed == std::vector<std::pair<std::string, pid_t>>{{"uid-r", 0}});
}

TEST_CASE("a run whose worker died before recording its child has the group its spawn ledger names killed") {
  test::TempDb temp;
  running_under(temp, {"here", "boot-1", 321, 3000}, ChildRecorded::no);
  auto ledger = exec::spawn_ledger_path(temp.db.local_stem(), 321, 3000);
  std::ofstream(ledger) << "uid-other 11\nuid-r 4343\n";
  auto ledger_of_another_worker = exec::spawn_ledger_path(temp.db.local_stem(), 321, 3001);
  std::ofstream(ledger_of_another_worker) << "uid-r 99\n";
  FakeProcessTable processes;
  CHECK(sched::recover_lost_runs(temp.db, at(10, 0, 5), self, processes).value().size() == 1);
  CHECK(processes.attempts_killed == std::vector<std::pair<std::string, pid_t>>{{"uid-r", 4343}});
  CHECK_FALSE(std::filesystem::exists(ledger));  // the dead worker's ledger is done with
  CHECK(std::filesystem::exists(ledger_of_another_worker));
}

TEST_CASE("a run whose worker lives on this host is left alone past its lease on a file, not on a server") {
  test::TempDb temp;
  auto run_id = running_under(temp, {"here", "boot-1", 321, 3000});
  FakeProcessTable processes;
  processes.alive.insert({321, 3000});
  auto lease = store::running_runs(temp.db).value().front().lease_expires_at.value();
  auto margin = sched::lease_margin(temp.db);
  CHECK(sched::recover_lost_runs(temp.db, lease + margin - 1ms, self, processes).value().empty());
  auto lost = sched::recover_lost_runs(temp.db, lease + margin + 1h, self, processes).value();
  if (temp.db.file()) {
    // One machine: the worker's own process is the proof it still works.
    CHECK(lost.empty());
    CHECK(store::find_run(temp.db, run_id).value()->status == core::RunStatus::running);
    CHECK(processes.killed.empty());
  } else {
    // Leases are renewed on a server: one left to expire means the worker
    // is frozen or cut off, and what it left running is ended.
    REQUIRE(lost.size() == 1);
    CHECK(lost.front().reason.find("not renewed") != std::string::npos);
    CHECK(store::find_run(temp.db, run_id).value()->status == core::RunStatus::lost);
    CHECK_FALSE(processes.killed.empty());
  }
}

TEST_CASE("the children of several runs are recorded in one statement, each in its own run") {
  test::TempDb temp;
  auto first = running_under(temp, self, ChildRecorded::no);
  auto task = test::add_task(temp.db, test::every_definition("s", 1h), at(10, 0), true);
  auto second = store::insert_queued_run(temp.db, task, at(10, 0), core::Trigger::schedule, at(10, 0)).value();
  store::StartRecord record{second, "uid-s", 1, 1, at(10, 0), at(11, 0), at(11, 0), self};
  REQUIRE(store::mark_running(temp.db, record, task.id, task.state, at(10, 0)).value());
  REQUIRE(store::set_children(temp.db, {{first, 4242, 777}, {second, 4343, 888}}));
  auto running = store::running_runs(temp.db).value();
  REQUIRE(running.size() == 2);
  CHECK((running[0].id == first && running[0].child_pid == 4242 && running[0].child_started_at == 777));
  CHECK((running[1].id == second && running[1].child_pid == 4343 && running[1].child_started_at == 888));
  REQUIRE(store::set_children(temp.db, {}));
}

TEST_CASE("a lease is renewed to the time given plus the task's kill grace, only for the attempt that runs") {
  test::TempDb temp;
  auto run_id = running_under(temp, self);
  auto renewed = store::renew_leases(temp.db, {{run_id, "uid-r"}, {run_id + 100, "uid-x"}}, at(11, 0)).value();
  REQUIRE(renewed.size() == 1);
  CHECK((renewed[0].run_id == run_id && renewed[0].stop_reason.empty()));
  CHECK(store::running_runs(temp.db).value().front().lease_expires_at == at(11, 0) + 10s);  // the kill grace
  CHECK(store::renew_leases(temp.db, {{run_id, "uid-stale"}}, at(12, 0)).value().empty());
  CHECK(store::running_runs(temp.db).value().front().lease_expires_at == at(11, 0) + 10s);
  REQUIRE(store::ask_to_stop(temp.db, run_id, "uid-stale", "not this attempt"));
  REQUIRE(store::ask_to_stop(temp.db, run_id, "uid-r", "replaced"));
  CHECK(store::renew_leases(temp.db, {{run_id, "uid-r"}}, at(11, 1)).value().front().stop_reason == "replaced");
  store::FinishRecord finish{run_id, "uid-r", core::RunStatus::lost, at(11, 1)};
  REQUIRE(store::finish_run(temp.db, finish).value());
  CHECK(store::renew_leases(temp.db, {{run_id, "uid-r"}}, at(12, 0)).value().empty());  // taken: not renewed
  CHECK(store::renew_leases(temp.db, {}, at(12, 0)).value().empty());
}

TEST_CASE("a reused pid does not keep a dead worker's run alive") {
  test::TempDb temp;
  running_under(temp, {"here", "boot-1", 321, 3000});
  FakeProcessTable processes;
  processes.alive.insert({321, 9999});  // another process got pid 321
  CHECK(sched::recover_lost_runs(temp.db, at(10, 1), self, processes).value().size() == 1);
}

TEST_CASE("after a reboot every run of this host is LOST: at once on a file, by its lease on a server") {
  test::TempDb temp;
  running_under(temp, {"here", "boot-0", 321, 3000});
  FakeProcessTable processes;
  processes.alive.insert({321, 3000});
  if (!temp.db.file()) {
    // Another boot id under this host id may be another machine given the
    // same one, whose pid 321 is not this machine's to judge.
    auto lease = store::running_runs(temp.db).value().front().lease_expires_at.value();
    CHECK(sched::recover_lost_runs(temp.db, lease + sched::lease_margin(temp.db) - 1ms, self, processes)
              .value()
              .empty());
    auto lost = sched::recover_lost_runs(temp.db, lease + sched::lease_margin(temp.db), self, processes).value();
    REQUIRE(lost.size() == 1);
    CHECK(lost.front().reason.find("expired") != std::string::npos);
    CHECK(processes.killed.empty());
    return;
  }
  auto lost = sched::recover_lost_runs(temp.db, at(10, 1), self, processes).value();
  REQUIRE(lost.size() == 1);
  CHECK(lost.front().reason.find("rebooted") != std::string::npos);
}

TEST_CASE("another host's run is LOST only once its lease has expired by the margin") {
  test::TempDb temp;
  auto run_id = running_under(temp, {"elsewhere", "boot-x", 321, 3000});
  FakeProcessTable processes;
  auto lease = store::running_runs(temp.db).value().front().lease_expires_at.value();
  auto margin = sched::lease_margin(temp.db);
  CHECK(margin == (temp.db.file() ? 60s : 500ms));
  CHECK(sched::recover_lost_runs(temp.db, lease + margin - 1ms, self, processes).value().empty());
  CHECK(sched::recover_lost_runs(temp.db, lease + margin, self, processes).value().size() == 1);
  CHECK(processes.killed.empty());  // another host's processes are not ours to kill
  CHECK(store::find_run(temp.db, run_id).value()->status == core::RunStatus::lost);
}

// The workers table: loops register, beat and leave; recovery removes the
// rows of the dead.

namespace {

store::WorkerRow worker_row(const store::WorkerIdentity& identity, core::Time since) {
  return {0, "run", identity, 4, since, since};
}

std::vector<pid_t> listed_pids(store::Database& db) {
  std::vector<pid_t> pids;
  auto rows = store::list_workers(db).value();
  for (const auto& row : rows) pids.push_back(row.identity.pid);
  return pids;
}

}  // namespace

TEST_CASE("a registered worker is listed with its role, identity, concurrency and times until it leaves") {
  test::TempDb temp;
  auto id = store::register_worker(temp.db, worker_row(self, at(10, 0))).value();
  REQUIRE(store::heartbeat_worker(temp.db, id, at(10, 0, 10), core::Millis{0}).value());
  auto rows = store::list_workers(temp.db).value();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].id == id);
  CHECK(rows[0].role == "run");
  CHECK((rows[0].identity.host == "here" && rows[0].identity.boot_id == "boot-1"));
  CHECK((rows[0].identity.pid == 500 && rows[0].identity.started_at == 5000));
  CHECK(rows[0].concurrency == 4);
  CHECK(rows[0].started_at == at(10, 0));
  CHECK(rows[0].heartbeat_at == at(10, 0, 10));
  REQUIRE(store::unregister_worker(temp.db, id));
  CHECK(store::list_workers(temp.db).value().empty());
  CHECK_FALSE(store::heartbeat_worker(temp.db, id, at(10, 0, 20), core::Millis{0}).value());
}

TEST_CASE("a loop's presence beats at most every heartbeat interval and registers again if its row was removed") {
  test::TempDb temp;
  FakeClock clock{at(10, 0)};
  auto presence = sched::Presence::enter(temp.db, worker_row(self, at(0, 0)), clock).value();
  CHECK(presence.next_heartbeat_at() == at(10, 0) + sched::heartbeat_interval);
  REQUIRE(presence.beat_if_due(at(10, 0, 9)));
  CHECK(store::list_workers(temp.db).value().front().heartbeat_at == at(10, 0));  // not due: nothing written
  REQUIRE(presence.beat_if_due(at(10, 0, 10)));
  CHECK(store::list_workers(temp.db).value().front().heartbeat_at == at(10, 0, 10));
  CHECK(presence.next_heartbeat_at() == at(10, 0, 20));

  REQUIRE(store::unregister_worker(temp.db, store::list_workers(temp.db).value().front().id));
  REQUIRE(presence.beat_if_due(at(10, 0, 20)));
  auto rows = store::list_workers(temp.db).value();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].started_at == at(10, 0));
  CHECK(rows[0].heartbeat_at == at(10, 0, 20));
  REQUIRE(presence.leave());
  CHECK(store::list_workers(temp.db).value().empty());
}

TEST_CASE("a presence taken over from a hand-over keeps only a row of this process's") {
  test::TempDb temp;
  FakeClock clock{at(10, 0)};
  auto other_identity = self;
  other_identity.pid = self.pid + 1;
  auto other = sched::Presence::enter(temp.db, worker_row(other_identity, at(0, 0)), clock).value();
  // A record naming another worker's row: this process registers its own.
  auto adopted = sched::Presence::adopt(temp.db, worker_row(self, at(0, 0)), clock, other.id()).value();
  CHECK(adopted.id() != other.id());
  auto rows = store::list_workers(temp.db).value();
  REQUIRE(rows.size() == 2);
  auto others = std::ranges::find(rows, other.id(), &store::WorkerRow::id);
  REQUIRE(others != rows.end());
  CHECK(others->identity.pid == other_identity.pid);
  // Its own row is taken over as it is.
  auto again = sched::Presence::adopt(temp.db, worker_row(self, at(0, 0)), clock, adopted.id()).value();
  CHECK(again.id() == adopted.id());
  CHECK(store::list_workers(temp.db).value().size() == 2);
}

TEST_CASE("recovery removes the rows of this host's dead workers and keeps the living") {
  test::TempDb temp;
  FakeProcessTable processes;
  processes.alive = {{11, 1100}, {12, 9999}, {13, 1300}};
  REQUIRE(store::register_worker(temp.db, worker_row({"here", "boot-1", 11, 1100}, at(10, 0))));  // alive
  REQUIRE(store::register_worker(temp.db, worker_row({"here", "boot-1", 12, 1200}, at(10, 0))));  // pid reused
  // Before a reboot; on a server maybe another machine under this host id,
  // told by its heartbeat: silent for over an hour, and older than another.
  REQUIRE(store::register_worker(temp.db, worker_row({"here", "boot-0", 13, 1300}, at(9, 0))));
  REQUIRE(store::register_worker(temp.db, worker_row({"here", "boot-1", 14, 1400}, at(10, 0))));  // dead
  // However old its heartbeat, a living worker of this host stays.
  CHECK(sched::remove_gone_workers(temp.db, at(14, 0), self, processes).value() == 3);
  CHECK(listed_pids(temp.db) == std::vector<pid_t>{11});
}

TEST_CASE("another host's worker is alive while it beats, stale after three intervals, removed after an hour "
          "unless it is the last of its host, which stays a week") {
  test::TempDb temp;
  FakeProcessTable processes;
  bool one_machine = temp.db.file().has_value();
  store::WorkerIdentity earlier{"elsewhere", "boot-x", 20, 2000};
  store::WorkerIdentity remote{"elsewhere", "boot-x", 21, 2100};
  REQUIRE(store::register_worker(temp.db, worker_row(earlier, at(9, 0))));
  REQUIRE(store::register_worker(temp.db, worker_row(remote, at(10, 0))));
  auto beat = at(10, 0);
  CHECK(sched::liveness_of(one_machine, remote, beat, beat + 30s, self, processes) == sched::Liveness::alive);
  CHECK(sched::liveness_of(one_machine, remote, beat, beat + 31s, self, processes) == sched::Liveness::stale);
  CHECK(sched::liveness_of(one_machine, remote, std::nullopt, beat, self, processes) == sched::Liveness::unknown);
  CHECK(sched::remove_gone_workers(temp.db, at(9, 59), self, processes).value() == 0);
  CHECK(sched::remove_gone_workers(temp.db, beat + 1h, self, processes).value() == 1);  // the earlier one
  CHECK(listed_pids(temp.db) == std::vector<pid_t>{21});
  CHECK(sched::remove_gone_workers(temp.db, beat + std::chrono::days{7} - 1ms, self, processes).value() == 0);
  CHECK(sched::remove_gone_workers(temp.db, beat + std::chrono::days{7}, self, processes).value() == 1);
  CHECK(store::list_workers(temp.db).value().empty());
}

TEST_CASE("the recovery pass removes dead workers' rows along with recording their runs lost") {
  test::TempDb temp;
  store::WorkerIdentity dead{"here", "boot-1", 321, 3000};
  running_under(temp, dead);
  REQUIRE(store::register_worker(temp.db, worker_row(dead, at(10, 0))));
  FakeProcessTable processes;
  CHECK(sched::recover_lost_runs(temp.db, at(10, 1), self, processes).value().size() == 1);
  CHECK(store::list_workers(temp.db).value().empty());
}

// Groups, overlap modes and manual runs.

TEST_CASE("a group's concurrency cap holds across its tasks, and every run still runs") {
  Fixture f;
  for (const auto* name : {"g1", "g2", "g3"}) {
    auto d = test::every_definition(name, 60s);
    d.group = "crawlers";
    test::add_task(f.temp.db, d, at(10, 0), true);
  }
  test::add_task(f.temp.db, test::every_definition("free", 60s), at(10, 0), true);
  REQUIRE(store::set_group_concurrency(f.temp.db, "crawlers", 1, at(10, 0)));
  auto reports = f.tick_and_work();
  CHECK(reports.size() == 4);
  CHECK(f.runner.most_at_once == 2);  // one crawler and the ungrouped task
  auto groups = store::list_groups(f.temp.db).value();
  REQUIRE(groups.size() == 1);
  CHECK(groups.front().concurrency == 1);
  CHECK(groups.front().tasks == 3);
}

TEST_CASE("lifting a group's cap lets its runs run side by side") {
  Fixture f;
  for (const auto* name : {"g1", "g2"}) {
    auto d = test::every_definition(name, 60s);
    d.group = "crawlers";
    test::add_task(f.temp.db, d, at(10, 0), true);
  }
  REQUIRE(store::set_group_concurrency(f.temp.db, "crawlers", 1, at(10, 0)));
  REQUIRE(store::set_group_concurrency(f.temp.db, "crawlers", std::nullopt, at(10, 0)));
  f.tick_and_work();
  CHECK(f.runner.most_at_once == 2);
}

TEST_CASE("with overlap=queue a queued run waits while its task's run is running") {
  Fixture f;
  auto d = test::every_definition("q", 60s);
  d.overlap = core::Overlap::queue;
  auto task = test::add_task(f.temp.db, d, at(10, 0), true);
  REQUIRE(store::insert_queued_run(f.temp.db, task, at(10, 0), core::Trigger::manual, at(10, 0)));
  auto reports = f.tick_and_work();
  CHECK(reports.size() == 2);
  CHECK(f.runner.most_at_once == 1);
}

TEST_CASE("a manual run starts while its task is paused, and leaves next_run_at alone") {
  Fixture f;
  auto task = test::add_task(f.temp.db, test::every_definition("m", 1h), at(10, 0));
  auto state = f.task("m").state;
  state.paused = true;
  REQUIRE(store::save_state(f.temp.db, task.id, state, at(10, 0)));
  auto triggered = sched::trigger_run(f.temp.db, f.task("m"), false, at(10, 0)).value();
  REQUIRE(triggered.queued_run);
  auto reports = sched::work_until_idle(f.temp.db, f.clock, f.runner, f.options).value();
  REQUIRE(reports.size() == 1);
  CHECK(reports.front().status == core::RunStatus::succeeded);
  auto after = f.task("m");
  CHECK(after.state.next_run_at == task.state.next_run_at);
  CHECK(after.state.run_index == 1);
  CHECK(f.runs().front().trigger == core::Trigger::manual);
}

TEST_CASE("trigger: overlap=skip makes a second trigger a no-op; a disabled task needs --force") {
  Fixture f;
  auto task = test::add_task(f.temp.db, test::every_definition("t", 1h), at(10, 0));
  auto first = sched::trigger_run(f.temp.db, task, false, at(10, 0)).value();
  auto second = sched::trigger_run(f.temp.db, task, false, at(10, 0)).value();
  CHECK_FALSE(second.queued_run);
  CHECK(second.active_run == first.queued_run);
  f.tick_and_work();

  auto state = f.task("t").state;
  state.disabled_until_update = true;
  state.disabled_reason = "Cannot run t after 7 attempt(s): boom";
  REQUIRE(store::save_state(f.temp.db, task.id, state, at(10, 0)));
  auto refused = sched::trigger_run(f.temp.db, f.task("t"), false, at(10, 5));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == core::ErrorKind::bad_input);
  CHECK(refused.error().message.find("--force") != std::string::npos);
  auto forced = sched::trigger_run(f.temp.db, f.task("t"), true, at(10, 5)).value();
  CHECK(forced.enabled);
  CHECK(forced.queued_run);
  CHECK_FALSE(f.task("t").state.disabled_until_update);
}

namespace {

// The task of running_under, made overlap=replace, with its run RUNNING under `worker`.
std::pair<std::int64_t, core::Task> replaceable_running_under(test::TempDb& temp, const store::WorkerIdentity& worker) {
  auto run_id = running_under(temp, worker);
  auto task = store::find_task(temp.db, "r").value().value();
  task.definition.overlap = core::Overlap::replace;
  REQUIRE(store::update_definition(temp.db, task.id, task.definition, at(10, 0)));
  return {run_id, task};
}

}  // namespace

TEST_CASE("overlap=replace: the next slot ends the running attempt, stops its child, and its late report is stale") {
  test::TempDb temp;
  auto [run_id, task] = replaceable_running_under(temp, self);
  FakeProcessTable processes;
  auto ticked = sched::enqueue_due(temp.db, at(11, 0), 500, {}, processes).value();
  CHECK(ticked.enqueued == 1);
  CHECK(ticked.replaced == 1);
  if (!temp.db.file()) {
    // A server: even a run of this host is asked to stop (see below).
    CHECK(processes.terminated.empty());
    CHECK(store::find_run(temp.db, run_id).value()->status == core::RunStatus::running);
    return;
  }
  CHECK(processes.terminated == std::vector<pid_t>{4242});
  auto old_run = store::find_run(temp.db, run_id).value().value();
  CHECK(old_run.status == core::RunStatus::failed);
  CHECK(old_run.reason.find("replaced") != std::string::npos);
  auto after = store::find_task(temp.db, "r").value().value();
  CHECK(after.state.attempt_uid.empty());
  CHECK(after.state.attempt_no == 0);
  // The old worker reports its child's end: history and state stay as they are.
  sched::AttemptEnd late;
  late.run_id = run_id;
  late.task_id = task.id;
  late.attempt_uid = "uid-r";
  late.outcome = core::AttemptOutcome::failed;
  late.reason = "killed by SIGTERM";
  CHECK_FALSE(sched::record_attempt_end(temp.db, late, at(11, 0, 1)).value().current);
  CHECK(store::find_run(temp.db, run_id).value()->reason.find("replaced") != std::string::npos);
  CHECK(store::find_task(temp.db, "r").value()->state.last_status != core::RunStatus::failed);
}

TEST_CASE("overlap=replace on a server asks the run's worker to stop it, whatever its host; the new run waits") {
  test::TempDb temp;
  auto [run_id, task] = replaceable_running_under(temp, {"elsewhere", "boot-x", 321, 3000});
  FakeProcessTable processes;
  auto ticked = sched::enqueue_due(temp.db, at(11, 0), 500, {}, processes).value();
  CHECK(ticked.enqueued == 1);
  CHECK(store::find_task(temp.db, "r").value()->state.attempt_uid.empty());  // forgotten either way
  if (temp.db.file()) {
    // One machine: whatever host id it runs under, its child is ours to stop.
    CHECK(store::find_run(temp.db, run_id).value()->status == core::RunStatus::failed);
    CHECK(processes.terminated == std::vector<pid_t>{4242});
    return;
  }
  CHECK(processes.terminated.empty());
  CHECK(store::find_run(temp.db, run_id).value()->status == core::RunStatus::running);
  CHECK(store::next_queued_runs(temp.db, at(11, 0), 10, self.host).value().empty());  // one attempt at a time
  auto renewed = store::renew_leases(temp.db, {{run_id, "uid-r"}}, at(11, 0)).value();
  REQUIRE(renewed.size() == 1);
  CHECK(renewed[0].stop_reason.find("replaced by the run of slot") != std::string::npos);
  // Its worker ends it and records it: then the new run may start.
  sched::AttemptEnd end;
  end.run_id = run_id;
  end.task_id = task.id;
  end.attempt_uid = "uid-r";
  end.outcome = core::AttemptOutcome::failed;
  end.reason = renewed[0].stop_reason;
  CHECK_FALSE(sched::record_attempt_end(temp.db, end, at(11, 0, 2)).value().current);  // not the task's attempt any more
  CHECK(store::find_run(temp.db, run_id).value()->status == core::RunStatus::failed);
  CHECK(store::next_queued_runs(temp.db, at(11, 0, 2), 10, self.host).value().size() == 1);
}
