#include "core/duration.hpp"

#include <array>
#include <cstdint>
#include <fmt/format.h>
#include <limits>
#include <optional>

#include "core/chars.hpp"

namespace taskd::core {
namespace {

struct Unit {
  char symbol;
  std::int64_t seconds;
};

constexpr std::array<Unit, 5> units{{{'w', 604800}, {'d', 86400}, {'h', 3600}, {'m', 60}, {'s', 1}}};

constexpr std::int64_t max_seconds = longest_duration.count();

std::optional<std::int64_t> unit_seconds(char symbol) {
  for (const auto& unit : units) {
    if (unit.symbol == symbol) return unit.seconds;
  }
  return std::nullopt;
}

}  // namespace

Result<Seconds> parse_duration(std::string_view text) {
  auto error = [&](std::size_t position, std::string_view what) {
    return fail(ErrorKind::bad_input,
                fmt::format("invalid duration \"{}\": {} at position {}", text, what, position + 1));
  };
  if (text.empty()) return fail(ErrorKind::bad_input, "invalid duration \"\": empty (write e.g. 90s, 5m, 1h30m, 2d)");

  std::int64_t total = 0;
  std::size_t i = 0;
  std::optional<std::int64_t> previous_unit;
  while (i < text.size()) {
    if (!is_digit(text[i]))
      return error(i, fmt::format("expected a number, found '{}' (write e.g. 90s, 5m, 1h30m, 2d)", text[i]));
    std::int64_t number = 0;
    for (; i < text.size() && is_digit(text[i]); ++i) {
      number = number * 10 + (text[i] - '0');
      if (number > max_seconds) return error(i, "number too large");
    }
    if (i == text.size()) {
      if (previous_unit) return error(i - 1, "missing unit after the last number");
      total = number;  // a bare number is seconds, as systemd reads it
      break;
    }
    auto seconds = unit_seconds(text[i]);
    if (!seconds) return error(i, fmt::format("unknown unit '{}' (use w, d, h, m, s)", text[i]));
    if (previous_unit && *seconds >= *previous_unit) return error(i, "units must go from largest to smallest");
    previous_unit = seconds;
    total += number * *seconds;
    if (total > max_seconds) return error(i, "longer than ten years");
    ++i;
  }
  return Seconds{total};
}

std::string format_duration(Seconds duration) {
  std::int64_t rest = duration.count();
  if (rest == 0) return "0s";
  std::string out = rest < 0 ? "-" : "";
  if (rest < 0) rest = -rest;
  for (const auto& unit : units) {
    if (unit.symbol == 'w') continue;  // "14d" reads better than "2w" in tables
    if (rest >= unit.seconds) {
      out += fmt::format_int(rest / unit.seconds).c_str();  // no format string: export writes several a task
      out += unit.symbol;
      rest %= unit.seconds;
    }
  }
  return out;
}

std::string format_duration_ms(Millis duration) {
  auto whole = std::chrono::duration_cast<Seconds>(duration);
  auto millis = (duration - whole).count();
  if (millis == 0) return format_duration(whole);
  std::string sign = duration < Millis{0} && whole == Seconds{0} ? "-" : "";
  std::string seconds = whole == Seconds{0} ? "" : format_duration(whole);
  return fmt::format("{}{}{}ms", sign, seconds, millis < 0 ? -millis : millis);
}

}  // namespace taskd::core
