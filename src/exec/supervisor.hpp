#pragma once
// Watches the children taskd started: collects their output, enforces each
// timebox (SIGTERM to the process group at the deadline, SIGKILL after the
// grace), reaps them, and cleans up what they left running in their group.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "exec/output_buffer.hpp"
#include "exec/spawn.hpp"

namespace taskd::exec {

using SteadyTime = std::chrono::steady_clock::time_point;

struct ChildLimits {
  std::chrono::milliseconds timeout;
  std::chrono::seconds kill_grace;
  std::size_t output_limit;
};

struct ChildResult {
  std::uint64_t key = 0;  // the caller's name for the child
  int exit_code = -1;     // -1 when a signal ended it
  int signal = 0;
  bool timed_out = false;
  std::string output;     // the last output_limit bytes of stdout+stderr
  bool output_truncated = false;
};

class Supervisor {
 public:
  // Makes taskd the subreaper of its children's orphans, so what a run leaves
  // behind can be waited for and counted as gone.
  Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;
  // Kills (SIGKILL) and reaps every child and group still there.
  ~Supervisor();

  // Starts a child under `key`; returns its pid.
  core::Result<pid_t> start(std::uint64_t key, const SpawnRequest& request, const ChildLimits& limits);

  // Blocks until at least one child has ended (or none is left) and returns
  // the ones that did.
  std::vector<ChildResult> wait_for_exits();

  // Waits until the processes children left behind in their groups are gone,
  // killing them after their grace.
  void finish_lingering();

  std::size_t running() const { return children_.size(); }

 private:
  struct Child {
    std::uint64_t key;
    pid_t pid;
    int output_fd;
    int exit_fd;  // a pidfd that polls readable when the child exits; -1 if unsupported
    SteadyTime deadline;
    std::chrono::seconds kill_grace;
    bool terminated = false;  // SIGTERM sent at the deadline
    bool killed = false;      // SIGKILL sent after the grace
    OutputBuffer output;
  };
  // A group whose leader has ended but whose other members may not have.
  struct Lingering {
    pid_t group;
    SteadyTime kill_at;
  };

  void enforce_deadlines(SteadyTime now);
  std::vector<ChildResult> reap_exited(SteadyTime now);
  void poll_once(SteadyTime now);
  SteadyTime next_action_time() const;

  std::vector<Child> children_;
  std::vector<Lingering> lingering_;
};

}  // namespace taskd::exec
