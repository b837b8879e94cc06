#pragma once
// What the worker needs from whatever runs its children: start one, wait for
// some to end, clean up. The Supervisor runs real processes; tests use a fake
// that records what would run and returns scripted outcomes.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "core/limits.hpp"
#include "core/usage.hpp"
#include "exec/spawn.hpp"

namespace taskd::exec {

using SteadyTime = std::chrono::steady_clock::time_point;

struct ChildLimits {
  std::chrono::milliseconds timeout;
  std::chrono::seconds kill_grace;
  std::size_t output_limit;  // bytes of output kept: its head and its tail
  core::ResourceLimits resources;  // for its cgroup; a runner that cannot apply them does not start it
};

struct ChildResult {
  std::uint64_t key = 0;  // the caller's name for the child
  int exit_code = -1;     // -1 when a signal ended it
  int signal = 0;
  bool timed_out = false;
  bool stopped = false;   // taskd stopped it as it shut down
  bool fenced = false;    // its lease ran out before its worker could renew it
  std::string output;     // stdout+stderr: its head and tail, output_limit bytes, and the cut line
  bool output_truncated = false;
  core::ResourceUsage usage;
};

// What a child has written so far: as its result's output will hold it,
// and how many bytes it wrote in all (which grows with each write).
struct OutputSoFar {
  std::string output;
  bool truncated = false;
  std::size_t total_bytes = 0;
};

class Runner {
 public:
  virtual ~Runner() = default;

  // Starts a child under `key`. A program that cannot be executed is an
  // error whose message says why.
  virtual core::Result<StartedProcess> start(std::uint64_t key, const SpawnRequest& request, const ChildLimits& limits) = 0;

  // Blocks until at least one child has ended (or none is left), or
  // `until` has come, and returns the ones that ended, maybe none.
  virtual std::vector<ChildResult> wait_for_exits(SteadyTime until) = 0;

  // The child's run is leased until `until`, by the worker's monotonic
  // clock: unless extended again, the child is ended then as by its
  // timebox (SIGTERM, SIGKILL after the grace; at once when `until` is a
  // grace or more past) and its result says `fenced`. An `until` that has
  // come is acted on before this returns.
  virtual void hold_lease(std::uint64_t key, SteadyTime until) = 0;
  // When the next lease runs out, or the next fenced child is to be killed;
  // none while no lease is held.
  virtual std::optional<SteadyTime> next_lease_action() const = 0;

  // What the child under `key` has written so far; none when no such child runs.
  virtual std::optional<OutputSoFar> output_so_far(std::uint64_t key) const = 0;

  // Waits until what the children left behind in their groups is gone.
  virtual void finish_lingering() = 0;

  virtual std::size_t running() const = 0;
};

}  // namespace taskd::exec
