#pragma once
// Who a process is, in a way that survives pid reuse: host, pid and the
// process's start time (clock ticks after boot, from /proc/PID/stat).
#include <chrono>
#include <csignal>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace taskd::exec {

std::string host_name();

// This boot's id (/proc/sys/kernel/random/boot_id): process start times are
// counted from boot, so they only compare within one boot.
std::string boot_id();
// This machine's id (/etc/machine-id, or D-Bus's copy of it), the same
// across reboots; empty when it has none (some containers).
std::string machine_id();

// Whether the process `pid` that started at `start_ticks` still runs (a pid
// reused by another process does not count).
bool is_running(pid_t pid, std::int64_t start_ticks);

// `signal` to the process group led by `pid`, if that process is still the
// one that started at `start_ticks` (even as a zombie), or is gone: its
// group may remain.
// Returns whether it sent the signal.
bool kill_group_if_running(pid_t pid, std::int64_t start_ticks, int signal = SIGKILL);

// `signal` to the process group `group` if no process with that id runs (a
// zombie does not count): the group of a leader that died, which no new
// process can lead while it has members. Returns whether it sent the signal.
bool kill_group_if_leader_gone(pid_t group, int signal = SIGKILL);

// Waits until no process is left in the group `group` (its members were
// killed and reaped), for at most `limit`; returns whether it is gone.
bool wait_for_group_gone(pid_t group, std::chrono::milliseconds limit);

// The process groups of the processes whose environment holds `entry`
// ("NAME=value"), never taskd's own group: what a run left running after it
// called setsid or double-forked (a daemon keeps its environment), or the
// processes of a child whose pid was never recorded. Only the processes this
// user may read are seen; one pass over /proc.
std::vector<pid_t> groups_with_environment(std::string_view entry);
// The same for the processes whose environment holds any of `entries`, in
// one pass.
std::vector<pid_t> groups_with_environment(std::span<const std::string> entries);

// SIGKILL to each of groups_with_environment(entry).
void kill_groups_with_environment(std::string_view entry);

// The start time of `pid` in clock ticks after boot, or 0 when it does not
// run (gone, or a zombie).
std::int64_t process_start_ticks(pid_t pid);

// CLOCK_BOOTTIME now, as the kernel reads it: the clock it stamps a new
// process's start time with.
std::chrono::nanoseconds boot_clock();

// The start time of `pid`, a child created between the boot_clock()
// readings `before` and `after`, as process_start_ticks() would read it:
// the clock tick both readings fall in, without reading /proc (that was 6 %
// of taskd's time in bench/dispatch.sh); from /proc when a tick began
// between them.
std::int64_t child_start_ticks(pid_t pid, std::chrono::nanoseconds before, std::chrono::nanoseconds after);

}  // namespace taskd::exec
