#pragma once
// Durations as people write them: "90s", "5m", "1h30m", "2d", "1w", or a bare
// number of seconds.
#include <chrono>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace taskd::core {

using Seconds = std::chrono::seconds;
using Millis = std::chrono::milliseconds;

// Ten years: the longest duration taskd takes, far beyond any sensible
// schedule and far below any overflow.
inline constexpr Seconds longest_duration{10LL * 366 * 86400};

// Parses a duration; an error names the input and the offending position.
Result<Seconds> parse_duration(std::string_view text);

// The shortest form parse_duration reads back: 5400s -> "1h30m", 0 -> "0s".
std::string format_duration(Seconds duration);

// The same with the milliseconds, if any, last: 820ms, 1s100ms, 1m.
std::string format_duration_ms(Millis duration);

}  // namespace taskd::core
