#pragma once
// What a run's processes used, as far as taskd could measure it: from the
// run's cgroup (every descendant), else from the kernel's account of the
// main process and the children it waited for (wait4).
#include <chrono>
#include <cstdint>
#include <optional>

namespace taskd::core {

struct ResourceUsage {
  std::optional<std::chrono::microseconds> cpu;    // user and system time
  std::optional<std::int64_t> peak_memory_bytes;  // the most memory in use at once
};

}  // namespace taskd::core
