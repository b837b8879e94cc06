#pragma once
// Short time slices for taskd and for its children until they execute
// their program. On a busy machine a process that wakes (taskd when a child
// ends, a child just made) waits for the slice of whatever runs on the core
// it lands on, and taskd waits in vfork() until its child has executed:
// that wait was most of taskd's time a run (bench/dispatch.sh). A process
// that asked for a shorter slice than the running one's preempts it (EEVDF,
// Linux 6.12 and later; older kernels ignore the request). The slice does
// not change a process's share of the CPU (its nice value does), and the
// child takes the default slice back before it executes: the program runs
// as it would have without taskd asking.
#include <cstdint>

namespace taskd::exec {

// struct sched_attr of sched_setattr(2), which glibc 2.36 does not declare.
struct SchedulingAttributes {
  std::uint32_t size = sizeof(SchedulingAttributes);
  std::uint32_t policy = 0;
  std::uint64_t flags = 0;
  std::int32_t nice = 0;
  std::uint32_t priority = 0;
  std::uint64_t runtime = 0;  // for SCHED_OTHER: the slice asked for in ns; 0 is the default
  std::uint64_t deadline = 0;
  std::uint64_t period = 0;
  std::uint32_t util_min = 0;
  std::uint32_t util_max = 0;
};
static_assert(sizeof(SchedulingAttributes) == 56, "SCHED_ATTR_SIZE_VER1");

// Asks for short slices for taskd (and the children it starts) when it runs
// under SCHED_OTHER; under another policy (SCHED_BATCH, a real-time one), or
// with reset-on-fork, taskd leaves its scheduling as it is.
void ask_for_short_slices();

// What a child sets before it executes its program: taskd's policy and
// nice value with the default slice; nullptr when taskd asked for nothing.
const SchedulingAttributes* child_scheduling();

}  // namespace taskd::exec
