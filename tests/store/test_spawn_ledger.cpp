// Real processes, as few as the spawn ledger needs: the child's own line in
// the ledger, and the group of a leader that is gone.
#include <doctest/doctest.h>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/process_identity.hpp"
#include "exec/spawn.hpp"
#include "exec/spawn_ledger.hpp"
#include "temp_db.hpp"

using namespace taskd;

namespace {

// Starts `argv` in its own process group; returns its pid.
pid_t start(std::vector<std::string> argv, int ledger_fd = -1, std::string tag = "") {
  exec::SpawnRequest request{std::move(argv), {"PATH=/usr/bin:/bin"}, "", ledger_fd, std::move(tag)};
  auto child = exec::spawn_child(request).value();
  ::close(child.output_fd);
  return child.process.pid;
}

}  // namespace

TEST_CASE("a child writes its tag and pid to the spawn ledger before it executes") {
  test::TempDir dir;
  auto path = exec::spawn_ledger_path(dir.path() / "taskd.db", 321, 3000);
  CHECK(path == (dir.path() / "taskd.db-spawns.321.3000").string());
  auto ledger = exec::SpawnLedger::create(path).value();
  pid_t first = start({"true"}, ledger.fd(), "attempt-1");
  pid_t second = start({"true"}, ledger.fd(), "attempt-2");
  ::waitpid(first, nullptr, 0);
  ::waitpid(second, nullptr, 0);
  CHECK(exec::find_in_spawn_ledger(path, "attempt-1") == first);
  CHECK(exec::find_in_spawn_ledger(path, "attempt-2") == second);
  CHECK(exec::find_in_spawn_ledger(path, "attempt") == 0);
  ledger.clear();
  CHECK(exec::find_in_spawn_ledger(path, "attempt-1") == 0);
}

TEST_CASE("a spawn ledger is removed with its worker; a missing one lists nothing") {
  test::TempDir dir;
  auto path = exec::spawn_ledger_path(dir.path() / "taskd.db", 1, 2);
  { auto ledger = exec::SpawnLedger::create(path).value(); }
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK(exec::find_in_spawn_ledger(path, "attempt-1") == 0);
}

TEST_CASE("a spawn ledger is a new file: whatever was at its path is left alone") {
  test::TempDir dir;
  auto precious = dir.path() / "precious";
  std::ofstream(precious) << "someone's file\n";
  auto path = exec::spawn_ledger_path(dir.path() / "taskd.db", 7, 8);
  SUBCASE("a hard link") { std::filesystem::create_hard_link(precious, path); }
  SUBCASE("a symbolic link") { std::filesystem::create_symlink(precious, path); }
  auto ledger = exec::SpawnLedger::create(path);
  REQUIRE(ledger);
  pid_t child = start({"true"}, ledger->fd(), "attempt-1");
  ::waitpid(child, nullptr, 0);
  CHECK(exec::find_in_spawn_ledger(path, "attempt-1") == child);
  std::stringstream kept;
  kept << std::ifstream(precious).rdbuf();
  CHECK(kept.str() == "someone's file\n");
}

TEST_CASE("the group of a leader that is gone is killed; a living leader's group is not") {
  // The leader leaves a member in its group and exits; the test reaps it.
  pid_t gone = start({"sh", "-c", "sleep 30 & exit 0"});
  ::waitpid(gone, nullptr, 0);
  CHECK(::kill(-gone, 0) == 0);
  CHECK(exec::kill_group_if_leader_gone(gone));
  CHECK(exec::wait_for_group_gone(gone, std::chrono::seconds{5}));

  pid_t living = start({"sleep", "30"});
  CHECK_FALSE(exec::kill_group_if_leader_gone(living));
  CHECK(exec::is_running(living, exec::process_start_ticks(living)));
  ::kill(-living, SIGKILL);
  ::waitpid(living, nullptr, 0);
}
