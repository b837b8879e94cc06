#include <doctest/doctest.h>

#include "core/limits.hpp"

using namespace taskd::core;

namespace {

// The message of a refused value: it names the option and the value.
std::string refusal(const Result<std::optional<std::int64_t>>& parsed) {
  REQUIRE_FALSE(parsed);
  CHECK(parsed.error().kind == ErrorKind::bad_input);
  return parsed.error().message;
}

}  // namespace

TEST_CASE("a memory size is bytes, or K, M, G, T in powers of 1024 as cgroup v2 reads them") {
  CHECK(parse_memory_max("4096").value() == 4096);
  CHECK(parse_memory_max("1K").value() == 1024);
  CHECK(parse_memory_max("512M").value() == 512LL << 20);
  CHECK(parse_memory_max("512m").value() == 512LL << 20);
  CHECK(parse_memory_max("2G").value() == 2LL << 30);
  CHECK(parse_memory_max("1T").value() == 1LL << 40);
  CHECK(parse_memory_max("8388607T").value() == 8388607LL << 40);
}

TEST_CASE("max or nothing is no memory limit") {
  CHECK(parse_memory_max("max").value() == std::nullopt);
  CHECK(parse_memory_max("").value() == std::nullopt);
}

TEST_CASE("a malformed memory size names --memory-max and the value") {
  CHECK(refusal(parse_memory_max("12Q")).starts_with("--memory-max \"12Q\": expected bytes"));
  CHECK(refusal(parse_memory_max("0")) == "--memory-max \"0\": must be more than 0 (max for no limit)");
  CHECK(refusal(parse_memory_max("8388608T")) == "--memory-max \"8388608T\": too large");
  CHECK(refusal(parse_memory_max("9223372036854775808")).starts_with("--memory-max \"9223372036854775808\""));
  for (const char* bad : {"M", "-1M", "+1M", "1.5G", "1 G", "1MB", "1MiB", " 1M", "MAX", "1e6"}) {
    INFO(bad);
    CHECK_FALSE(parse_memory_max(bad));
  }
}

TEST_CASE("a memory size is written back in its largest exact unit") {
  CHECK(format_byte_size(512LL << 20) == "512M");
  CHECK(format_byte_size(1LL << 30) == "1G");
  CHECK(format_byte_size(1536LL << 10) == "1536K");
  CHECK(format_byte_size(3LL << 40) == "3T");
  CHECK(format_byte_size(1000) == "1000");
  for (std::int64_t bytes : {1LL, 1023LL, 1024LL, 5LL << 20, (1LL << 30) + 1024}) {
    CHECK(parse_memory_max(format_byte_size(bytes)).value() == bytes);
  }
}

TEST_CASE("a CPU weight is cgroup v2's 1 to 10000") {
  CHECK(parse_cpu_weight("1").value() == 1);
  CHECK(parse_cpu_weight("10000").value() == 10000);
  CHECK(parse_cpu_weight("").value() == std::nullopt);
  CHECK(refusal(parse_cpu_weight("0")) == "--cpu-weight \"0\": expected a whole number from 1 to 10000");
  CHECK(refusal(parse_cpu_weight("10001")).starts_with("--cpu-weight \"10001\""));
  CHECK(refusal(parse_cpu_weight("max")).starts_with("--cpu-weight \"max\""));
  CHECK_FALSE(parse_cpu_weight("-5"));
  CHECK_FALSE(parse_cpu_weight("1.5"));
}

TEST_CASE("a tasks limit is 1 to the kernel's PID_MAX_LIMIT, or max for none") {
  CHECK(parse_tasks_max("1").value() == 1);
  CHECK(parse_tasks_max("4194304").value() == 4194304);
  CHECK(parse_tasks_max("max").value() == std::nullopt);
  CHECK(parse_tasks_max("").value() == std::nullopt);
  CHECK(refusal(parse_tasks_max("0")) ==
        "--tasks-max \"0\": expected a whole number from 1 to 4194304, or max for no limit");
  CHECK(refusal(parse_tasks_max("4194305")).starts_with("--tasks-max \"4194305\""));
  CHECK_FALSE(parse_tasks_max("ten"));
}

TEST_CASE("limits are described as add takes them") {
  CHECK(describe_limits({}).empty());
  CHECK(describe_limits({.memory_max = 64LL << 20, .cpu_weight = std::nullopt, .tasks_max = 32}) ==
        "--memory-max 64M --tasks-max 32");
  CHECK(describe_limit(LimitKind::cpu_weight, 300) == "--cpu-weight 300");
  CHECK_FALSE(ResourceLimits{}.any());
  CHECK(ResourceLimits{.memory_max = std::nullopt, .cpu_weight = 5, .tasks_max = std::nullopt}.any());
}
