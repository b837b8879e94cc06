#pragma once
// Starting a child process: vfork() and execve() (the cost does not grow
// with taskd's size; posix_spawn cannot set PR_SET_PDEATHSIG), its own
// process group, SIGKILL when taskd dies, stdin from /dev/null, stdout and
// stderr into one pipe, default signal handling, nothing else inherited.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

#include "core/error.hpp"
#include "exec/run_as.hpp"

namespace taskd::exec {

struct SpawnRequest {
  std::vector<std::string> argv;  // argv[0] is looked up in the PATH of `env`
  std::vector<std::string> env;   // "NAME=value"
  std::string cwd;                // empty: taskd's own
  // When not -1: the child appends "TAG PID" to this file (a SpawnLedger)
  // before it executes, so that its pid is known even if taskd dies before
  // it has recorded it.
  int ledger_fd = -1;
  std::string ledger_tag = {};
  // When not -1: the directory of the run's cgroup, which the child is
  // born in (clone3's CLONE_INTO_CGROUP) or, on a kernel without it, enters
  // before anything else (see cgroup.hpp).
  int cgroup_fd = -1;
  // When set: the child switches to them after entering its cgroup (taskd
  // must run as root); none: it runs as taskd does, at no cost.
  std::optional<Credentials> credentials = {};
  // With credentials and no cwd: where the child starts, as the user (cron
  // starts a user's commands in its home directory), else in /.
  std::string home = {};
};

// A process taskd started, told apart from any later one with its pid.
struct StartedProcess {
  pid_t pid;                 // also its process group id
  std::int64_t start_ticks;  // as process_start_ticks() reads it
};

struct SpawnedChild {
  StartedProcess process;
  int output_fd;  // read end of the stdout+stderr pipe, non-blocking, close-on-exec
};

// Starts the child. A program that cannot be executed (not found, not
// executable, a bad cwd) is an error whose message says so.
core::Result<SpawnedChild> spawn_child(const SpawnRequest& request);

// Starts a command that taskd does not supervise (a notification): its own
// session, outliving taskd; stdin from /dev/null, stdout and stderr on
// taskd's stderr; SIGALRM ends it after `time_limit`. Whoever is its parent
// when it ends reaps it (the Supervisor reaps strays). Returns its pid.
// With `input`: its stdin is a pipe holding it, then closed (taskd never
// waits on the command); input longer than detached_input_limit is an error.
core::Result<pid_t> spawn_detached(const SpawnRequest& request, std::chrono::seconds time_limit,
                                   std::string_view input = {});

// The most `input` spawn_detached takes: what a pipe holds at least.
inline constexpr std::size_t detached_input_limit = 60 * 1024;

// Where argv[0] lives, searched in `path_list` as execvp would; empty when
// it is nowhere. A name with a '/' is taken as it is.
std::string find_program(const std::string& name, const std::string& path_list);

}  // namespace taskd::exec
