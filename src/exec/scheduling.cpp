#include "exec/scheduling.hpp"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace taskd::exec {
namespace {

// The shortest slice the kernel grants (0.1 ms).
constexpr std::uint64_t short_slice_ns = 100'000;
constexpr std::uint64_t reset_on_fork = 0x01;  // SCHED_FLAG_RESET_ON_FORK

// Set once, before any child starts; read by every spawn.
bool asked = false;
SchedulingAttributes for_children;

}  // namespace

void ask_for_short_slices() {
  if (asked) return;
  SchedulingAttributes own;
  if (::syscall(SYS_sched_getattr, 0, &own, sizeof own, 0) != 0) return;
  if (own.policy != SCHED_OTHER || (own.flags & reset_on_fork) != 0) return;
  own.size = sizeof own;
  for_children = own;
  for_children.runtime = 0;
  own.runtime = short_slice_ns;
  asked = ::syscall(SYS_sched_setattr, 0, &own, 0) == 0;
}

const SchedulingAttributes* child_scheduling() { return asked ? &for_children : nullptr; }

}  // namespace taskd::exec
