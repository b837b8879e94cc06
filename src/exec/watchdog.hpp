#pragma once
// The watchdog of a taskd process that runs tasks: a process forked from it
// that waits for it to end and, when it ends without saying goodbye (SIGKILL,
// a crash, any signal), ends every process of its runs at once, on this
// machine, without waiting for the next taskd's recovery. Its children die
// with taskd by themselves (PR_SET_PDEATHSIG); what they started would not.
// With cgroups the watchdog kills every cgroup of taskd's tree and removes it,
// as taskd does when it exits; without, it kills the process group of each
// run's child and every group of a process that carries the run's
// $TASKD_ATTEMPT_UID (setsid, a double fork), which taskd listed for it in
// memory they share: no system call per run.
//
// On a server, where a run is taskd's only while it renews the run's lease,
// the watchdog is also the backstop of taskd's own fencing: a run whose
// lease taskd did not hold (taskd frozen by SIGSTOP, starved, stuck) is
// killed by it once its backstop passes, a time taskd sets at each renewal
// a while after its own SIGKILL would have come and before the lease ends
// on the server, where another host takes the run for lost and retries it.
//
// Across an upgrade (taskd executing its binary again, kill -USR2) it goes
// on: taskd keeps the pipe's write end and the memfd that holds the table
// open across execve, and the new image maps the table again (adopt()), so
// that no run goes unwatched and none is ended by the execve.
//
// It learns of taskd's end from a pipe of which taskd alone holds the write
// end (close-on-exec: no child inherits it), and nothing is ever written to;
// end of file is taskd's end. It blocks every signal it can, so that what
// reaches taskd's process group (Ctrl-C, a SIGTERM to the group) leaves it
// there for the moment taskd is gone, and it sits in a process group of its
// own, out of reach of a SIGKILL to taskd's. It shows itself as
// "taskd: watchdog of pid PID" (ps, /proc/PID/cmdline).
#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace taskd::exec {

class CgroupTree;

using SteadyTime = std::chrono::steady_clock::time_point;

// A run as the watchdog ends it: the process group its child leads (told
// from a later one by the child's start time) and the processes that carry
// its token, the "TASKD_ATTEMPT_UID=..." environment entry (empty: none);
// or, with cgroups, its cgroup (its name in the tree; empty: none).
struct WatchedRun {
  pid_t leader;
  std::int64_t start_ticks;
  std::string token;
  std::string cgroup;
};

// The runs a watchdog ends: a fixed table that taskd writes and the watchdog
// reads once taskd is gone. An entry counts once it is marked in use, which
// taskd does last, so one that taskd was killed while writing is not read.
// It lives in memory mapped for both (default-initialized there: the pages of
// entries never used are never touched).
class WatchedRuns {
 public:
  static constexpr std::size_t capacity = 16384;
  static constexpr std::size_t token_capacity = 63;
  static constexpr std::size_t cgroup_capacity = 23;

  // Records a run; returns its entry, or none when every entry is in use. A
  // token longer than token_capacity is not kept (the group still is), nor
  // a cgroup name longer than cgroup_capacity.
  std::optional<std::size_t> add(pid_t leader, std::int64_t start_ticks, std::string_view token,
                                 std::string_view cgroup = {});
  // Forgets the run of `entry`, which serves another one later.
  void remove(std::size_t entry);
  // The runs recorded and not forgotten.
  std::vector<WatchedRun> live() const;
  // Sets when the watchdog ends the run of `entry` if taskd has not set a
  // later time by then.
  void set_backstop(std::size_t entry, SteadyTime at);
  // The runs whose backstop passed at `now`, each handed out once: its
  // backstop is cleared as it is taken, unless taskd set a new one meanwhile.
  std::vector<WatchedRun> take_overdue(SteadyTime now);
  // Marks that taskd ended by itself, having ended its runs.
  void say_goodbye();
  bool said_goodbye() const;

 private:
  struct Entry {
    std::uint32_t in_use;  // read and written atomically (std::atomic_ref)
    std::uint32_t next_free;
    pid_t leader;
    std::int64_t start_ticks;
    std::array<char, token_capacity + 1> token;    // NUL-terminated
    std::array<char, cgroup_capacity + 1> cgroup;  // NUL-terminated
    std::int64_t backstop;  // steady clock nanoseconds, 0 for none; read and written atomically
  };
  static constexpr std::uint32_t no_entry = UINT32_MAX;

  std::uint32_t goodbye_ = 0;  // read and written atomically
  std::uint32_t first_free_ = no_entry;
  std::uint32_t used_ = 0;  // the entries ever handed out: [0, used_)
  std::array<Entry, capacity> entries_;
};

class Watchdog {
 public:
  // Forks the watchdog of this process. `cgroups`: the tree of its runs'
  // cgroups, or nullptr for runs it is told of with watch(). With
  // `scan_every`, it looks for runs past their backstop that often. An error
  // when the system refuses a process or the memory.
  static core::Result<Watchdog> start(const CgroupTree* cgroups, std::optional<std::chrono::milliseconds> scan_every);
  // What a next image of taskd needs to go on with this watchdog: its pid,
  // the pipe's write end and the table's memfd, both to keep across execve.
  struct Handed {
    pid_t pid;
    int taskd_end;
    int table;
  };
  Handed handed() const { return {pid_, taskd_end_, table_fd_}; }
  // The watchdog a previous image of this process handed over; an error
  // when its descriptors are not what handed() gave.
  static core::Result<Watchdog> adopt(Handed handed);
  Watchdog(Watchdog&& other) noexcept;
  Watchdog& operator=(Watchdog&&) = delete;
  Watchdog(const Watchdog&) = delete;
  // Says goodbye and waits for the watchdog to exit: the runs are taskd's
  // own business again.
  ~Watchdog();

  // See WatchedRuns::add, remove and set_backstop.
  std::optional<std::size_t> watch(pid_t leader, std::int64_t start_ticks, std::string_view token,
                                   std::string_view cgroup) {
    return runs_->add(leader, start_ticks, token, cgroup);
  }
  void forget(std::size_t entry) { runs_->remove(entry); }
  void backstop(std::size_t entry, SteadyTime at) { runs_->set_backstop(entry, at); }

 private:
  Watchdog(pid_t pid, int taskd_end, int table_fd, WatchedRuns* runs)
      : pid_(pid), taskd_end_(taskd_end), table_fd_(table_fd), runs_(runs) {}
  pid_t pid_;
  int taskd_end_;      // the pipe's write end
  int table_fd_;       // the memfd runs_ maps
  WatchedRuns* runs_;  // shared with the watchdog
};

}  // namespace taskd::exec
