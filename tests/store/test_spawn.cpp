#include <doctest/doctest.h>

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "exec/process_identity.hpp"
#include "exec/spawn.hpp"

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
