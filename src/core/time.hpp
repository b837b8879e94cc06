#pragma once
// Instants on the UTC timeline and their RFC 3339 spelling.
#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/duration.hpp"
#include "core/error.hpp"

namespace taskd::core {

// Every instant taskd keeps: Unix time in milliseconds.
using Time = std::chrono::sys_time<Millis>;

// `exact` writes the milliseconds only when there are any (a planned slot is
// usually whole seconds); `milliseconds` always writes them (measured times).
enum class Precision { exact, milliseconds };

// "2026-11-21T14:00:00Z" or "…T14:00:00.137Z".
std::string format_rfc3339(Time time, Precision precision = Precision::exact);

// format_rfc3339's text in a buffer of its own, not a string: a listing
// writes several times a task.
class Rfc3339Text {
 public:
  explicit Rfc3339Text(Time time, Precision precision = Precision::exact);
  std::string_view view() const { return {bytes_.data(), size_}; }

 private:
  std::array<char, 40> bytes_;  // the longest: a year of int's range, and milliseconds
  std::size_t size_;
};

// Reads RFC 3339 with a "Z" or "±HH:MM" offset and optional fractional seconds.
Result<Time> parse_rfc3339(std::string_view text);

// A time given by a user (--since, since=): an RFC 3339 time, or a duration
// that long before `now` ("2d"); none when `text` is empty. `option` names
// it in the error.
Result<std::optional<Time>> time_or_ago(std::string_view text, std::string_view option, Time now);

// The Gregorian calendar repeats every 400 years: a search for the next
// wall time that matches finds within them whatever it will ever find.
inline constexpr std::chrono::days calendar_search_horizon{400 * 366};

// The last instant taskd keeps (9999-12-31T23:59:59.999Z): a stored time
// outside 1970 to it is none taskd wrote, and is never computed with.
inline constexpr Time latest_time{Millis{253402300799999}};

constexpr std::int64_t to_unix_ms(Time time) { return time.time_since_epoch().count(); }
constexpr Time from_unix_ms(std::int64_t ms) { return Time{Millis{ms}}; }

}  // namespace taskd::core
