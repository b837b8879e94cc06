#pragma once
// Who a process is, in a way that survives pid reuse: host, pid and the
// process's start time (clock ticks after boot, from /proc/PID/stat).
#include <cstdint>
#include <string>
#include <sys/types.h>

namespace taskd::exec {

std::string host_name();

// The start time of `pid` in clock ticks after boot, or 0 when unknown.
std::int64_t process_start_ticks(pid_t pid);

}  // namespace taskd::exec
