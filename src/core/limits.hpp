#pragma once
// A task's limits on what its runs may use, as cgroup v2 applies them to a
// run's cgroup (taskd(1), Containment): memory.max, cpu.weight, pids.max.
// The values as `add` takes them: --memory-max 512M, --cpu-weight 200,
// --tasks-max 64.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace taskd::core {

struct ResourceLimits {
  std::optional<std::int64_t> memory_max;  // bytes; none: no limit
  std::optional<std::int64_t> cpu_weight;  // 1 to 10000 (cgroup's default: 100); none: the default
  std::optional<std::int64_t> tasks_max;   // processes and threads at once; none: no limit
  bool any() const { return memory_max || cpu_weight || tasks_max; }
  bool operator==(const ResourceLimits&) const = default;
};

enum class LimitKind { memory_max, cpu_weight, tasks_max };
constexpr std::array<LimitKind, 3> limit_kinds{LimitKind::memory_max, LimitKind::cpu_weight, LimitKind::tasks_max};

// The limit of that kind that `limits` sets; none when it sets none.
std::optional<std::int64_t> limit_of(const ResourceLimits& limits, LimitKind kind);
// A limit as `add` takes it: "--memory-max 512M", "--cpu-weight 200".
std::string describe_limit(LimitKind kind, std::int64_t value);
// Every limit set, so: "--memory-max 512M --tasks-max 64"; empty for none.
std::string describe_limits(const ResourceLimits& limits);

// The greatest cpu.weight, and pids.max (the kernel's PID_MAX_LIMIT).
constexpr std::int64_t max_cpu_weight = 10000;
constexpr std::int64_t max_tasks_max = 4 * 1024 * 1024;

// --memory-max: bytes, or a number with K, M, G or T (powers of 1024, as
// cgroup v2 reads memory.max); none for "max" or "". An error names the
// option and the value.
Result<std::optional<std::int64_t>> parse_memory_max(std::string_view text);
// The shortest form parse_memory_max and parse_keep_output read back:
// 536870912 -> "512M", 1000 -> "1000".
std::string format_byte_size(std::int64_t bytes);
// --keep-output: the bytes of output a run keeps, as --memory-max takes them
// ("64K", "1M"), 0 to max_keep_output; an error names the option and the value.
constexpr std::int64_t default_keep_output = std::int64_t{1} << 20;
constexpr std::int64_t max_keep_output = std::int64_t{512} << 20;
Result<std::int64_t> parse_keep_output(std::string_view text);
// --cpu-weight: 1 to 10000; none for "".
Result<std::optional<std::int64_t>> parse_cpu_weight(std::string_view text);
// --tasks-max: 1 to 4194304; none for "max" or "".
Result<std::optional<std::int64_t>> parse_tasks_max(std::string_view text);

}  // namespace taskd::core
