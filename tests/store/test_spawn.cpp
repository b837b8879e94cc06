#include <doctest/doctest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "exec/process_identity.hpp"
#include "exec/spawn.hpp"
#include "exec/supervisor.hpp"
#include "temp_db.hpp"

using namespace taskd;
using namespace std::chrono_literals;

TEST_CASE("a spawned child's start time is the one /proc/PID/stat shows") {
  std::vector<exec::SpawnedChild> children;
  for (int i = 0; i < 50; ++i) {
    auto spawned = exec::spawn_child({{"/bin/sleep", "60"}, {}, ""});
    REQUIRE(spawned);
    children.push_back(*spawned);
  }
  for (const auto& child : children) {
    CHECK(child.process.start_ticks == exec::process_start_ticks(child.process.pid));
    ::kill(child.process.pid, SIGKILL);
    ::waitpid(child.process.pid, nullptr, 0);
    ::close(child.output_fd);
  }
}

TEST_CASE("a child's start time is the tick its boot clock bracket falls in, or read from /proc when it spans two") {
  const std::chrono::nanoseconds tick = std::chrono::nanoseconds(1s) / ::sysconf(_SC_CLK_TCK);
  auto own_start = exec::process_start_ticks(::getpid());
  REQUIRE(own_start > 0);
  // The bracket says nothing of the pid: within one tick, that tick is taken as it is.
  CHECK(exec::child_start_ticks(::getpid(), 7 * tick + 1ns, 8 * tick - 1ns) == 7);
  CHECK(exec::child_start_ticks(::getpid(), 8 * tick - 1ns, 8 * tick) == own_start);
}

namespace {

exec::ChildLimits an_hour_with_grace(std::chrono::seconds grace) { return {std::chrono::hours(1), grace, 4096, {}}; }

// A Supervisor makes this process the subreaper of its children's orphans;
// the other tests of this binary expect orphans to go to init, as before.
struct NoSubreaperAfter {
  ~NoSubreaperAfter() { ::prctl(PR_SET_CHILD_SUBREAPER, 0); }
};

}  // namespace

TEST_CASE("a child whose lease runs out is ended as by its timebox, and at once if its grace is over too") {
  NoSubreaperAfter reset;
  exec::Supervisor supervisor;
  auto now = std::chrono::steady_clock::now();
  REQUIRE(supervisor.start(1, {{"/bin/sleep", "60"}, {}, ""}, an_hour_with_grace(5s)));
  REQUIRE(supervisor.start(2, {{"/bin/sleep", "60"}, {}, ""}, an_hour_with_grace(5s)));
  CHECK_FALSE(supervisor.next_lease_action());  // no lease held: the timebox alone
  supervisor.hold_lease(1, now + 1h);
  CHECK(supervisor.next_lease_action() == now + 1h);
  supervisor.hold_lease(1, now);        // ran out now: SIGTERM, SIGKILL after the grace
  supervisor.hold_lease(2, now - 10s);  // ran out longer ago than the grace: SIGKILL at once
  std::vector<exec::ChildResult> ended;
  while (ended.size() < 2) {
    auto some = supervisor.wait_for_exits(now + 4s);
    ended.insert(ended.end(), some.begin(), some.end());
    REQUIRE(std::chrono::steady_clock::now() < now + 4s);  // well before the grace of the first
  }
  std::ranges::sort(ended, {}, &exec::ChildResult::key);
  CHECK((ended[0].fenced && !ended[0].timed_out && ended[0].signal == SIGTERM));
  CHECK((ended[1].fenced && ended[1].signal == SIGKILL));
  CHECK_FALSE(supervisor.next_lease_action());
}

TEST_CASE("a lease that has run out is acted on as it is held, so that it bounds no later wait on the server") {
  // A run asked to stop has its lease ended now; until the child is sent
  // SIGTERM, its lease's end would be the next action, already past.
  NoSubreaperAfter reset;
  exec::Supervisor supervisor;
  REQUIRE(supervisor.start(1, {{"/bin/sleep", "60"}, {}, ""}, an_hour_with_grace(5s)));
  auto now = std::chrono::steady_clock::now();
  supervisor.hold_lease(1, now);
  auto next = supervisor.next_lease_action();
  REQUIRE(next);
  CHECK(*next == now + 5s);  // SIGTERM sent: its SIGKILL after the grace comes next
  auto ended = supervisor.wait_for_exits(now + 4s);
  REQUIRE(ended.size() == 1);
  CHECK((ended[0].fenced && ended[0].signal == SIGTERM));
}

TEST_CASE("a lease held further keeps its child running, and one that ends after the timebox is not a fence") {
  NoSubreaperAfter reset;
  exec::Supervisor supervisor;
  auto now = std::chrono::steady_clock::now();
  REQUIRE(supervisor.start(1, {{"/bin/sleep", "60"}, {}, ""}, {200ms, 1s, 4096}));
  supervisor.hold_lease(1, now + 1h);
  auto ended = supervisor.wait_for_exits(now + 10s);
  REQUIRE(ended.size() == 1);
  CHECK((ended[0].timed_out && !ended[0].fenced));
}

TEST_CASE("a child with resource limits is not started without a cgroup, and the error says why") {
  NoSubreaperAfter reset;
  test::TempDir dir;
  auto created = dir.path() / "created";
  exec::Supervisor supervisor({std::nullopt, "subreaper (no cgroup2 hierarchy is mounted)"});
  auto limits = an_hour_with_grace(1s);
  limits.resources.memory_max = 1 << 30;
  auto started = supervisor.start(1, {{"/bin/touch", created.string()}, {}, ""}, limits);
  REQUIRE_FALSE(started);
  CHECK(started.error().message ==
        "--memory-max 1G needs a cgroup with the memory controller: this worker contains its runs by subreaper "
        "(no cgroup2 hierarchy is mounted)");
  CHECK(supervisor.running() == 0);
  CHECK(supervisor.wait_for_exits(std::chrono::steady_clock::now()).empty());
  CHECK_FALSE(std::filesystem::exists(created));
}
