#include "core/limits.hpp"

#include <charconv>
#include <fmt/format.h>
#include <limits>

namespace taskd::core {
namespace {

struct SizeUnit {
  char symbol;
  int shift;  // bytes = number << shift
};

constexpr std::array<SizeUnit, 4> size_units{{{'T', 40}, {'G', 30}, {'M', 20}, {'K', 10}}};

// A number of ASCII digits alone, that fits.
std::optional<std::int64_t> whole_number(std::string_view text) {
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || text.front() == '-' || error != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return value;
}

// The shift of a size's unit letter (either case); none for another character.
std::optional<int> unit_shift(char symbol) {
  for (const auto& unit : size_units) {
    if (symbol == unit.symbol || symbol == unit.symbol + ('a' - 'A')) return unit.shift;
  }
  return std::nullopt;
}

// Whether a limit takes the word "max" for none.
enum class MaxWord { no_limit, refused };

// `text` as a number from 1 to `most`, for `option`; none for "" (and for
// "max" where it means no limit).
Result<std::optional<std::int64_t>> bounded_number(std::string_view option, std::string_view text, std::int64_t most,
                                                   MaxWord max) {
  if (text.empty() || (max == MaxWord::no_limit && text == "max")) return std::nullopt;
  auto number = whole_number(text);
  if (!number || *number < 1 || *number > most)
    return fail(ErrorKind::bad_input, fmt::format("{} \"{}\": expected a whole number from 1 to {}{}", option, text,
                                                  most, max == MaxWord::no_limit ? ", or max for no limit" : ""));
  return number;
}

// `text` as bytes: a whole number, alone or with K, M, G or T (powers of
// 1024, as cgroup v2 reads memory.max). An error names `option` and the
// value; `alternative` ends the message of a text that is no size.
Result<std::int64_t> byte_size(std::string_view option, std::string_view text, std::string_view alternative) {
  auto shift = text.size() > 1 ? unit_shift(text.back()) : std::nullopt;
  auto number = whole_number(shift ? text.substr(0, text.size() - 1) : text);
  if (!number)
    return fail(ErrorKind::bad_input,
                fmt::format("{} \"{}\": expected bytes, or a whole number with K, M, G or T (powers of 1024: 512M){}",
                            option, text, alternative));
  int bits = shift.value_or(0);
  if (*number > (std::numeric_limits<std::int64_t>::max() >> bits))
    return fail(ErrorKind::bad_input, fmt::format("{} \"{}\": too large", option, text));
  return *number << bits;
}

}  // namespace

Result<std::optional<std::int64_t>> parse_memory_max(std::string_view text) {
  if (text.empty() || text == "max") return std::nullopt;
  auto bytes = TRY(byte_size("--memory-max", text, ", or max for no limit"));
  if (bytes == 0)
    return fail(ErrorKind::bad_input, fmt::format("--memory-max \"{}\": must be more than 0 (max for no limit)", text));
  return bytes;
}

Result<std::int64_t> parse_keep_output(std::string_view text) {
  auto bytes = TRY(byte_size("--keep-output", text, ""));
  if (bytes > max_keep_output)
    return fail(ErrorKind::bad_input,
                fmt::format("--keep-output \"{}\": at most {}", text, format_byte_size(max_keep_output)));
  return bytes;
}

std::string format_byte_size(std::int64_t bytes) {
  if (bytes == 0) return "0";
  for (const auto& unit : size_units) {
    std::int64_t size = std::int64_t{1} << unit.shift;
    if (bytes % size == 0) return fmt::format("{}{}", bytes / size, unit.symbol);
  }
  return std::to_string(bytes);
}

std::optional<std::int64_t> limit_of(const ResourceLimits& limits, LimitKind kind) {
  switch (kind) {
    case LimitKind::memory_max: return limits.memory_max;
    case LimitKind::cpu_weight: return limits.cpu_weight;
    case LimitKind::tasks_max: return limits.tasks_max;
  }
  return std::nullopt;
}

std::string describe_limit(LimitKind kind, std::int64_t value) {
  switch (kind) {
    case LimitKind::memory_max: return "--memory-max " + format_byte_size(value);
    case LimitKind::cpu_weight: return fmt::format("--cpu-weight {}", value);
    case LimitKind::tasks_max: return fmt::format("--tasks-max {}", value);
  }
  return "";
}

std::string describe_limits(const ResourceLimits& limits) {
  std::string out;
  for (auto kind : limit_kinds) {
    if (auto value = limit_of(limits, kind)) out += (out.empty() ? "" : " ") + describe_limit(kind, *value);
  }
  return out;
}

Result<std::optional<std::int64_t>> parse_cpu_weight(std::string_view text) {
  return bounded_number("--cpu-weight", text, max_cpu_weight, MaxWord::refused);
}

Result<std::optional<std::int64_t>> parse_tasks_max(std::string_view text) {
  return bounded_number("--tasks-max", text, max_tasks_max, MaxWord::no_limit);
}

}  // namespace taskd::core
