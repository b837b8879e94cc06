#pragma once
// Durations as people write them: "90s", "5m", "1h30m", "2d", "1w", or a bare
// number of seconds.
#include <chrono>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace taskd::core {

using Seconds = std::chrono::seconds;

// Parses a duration; an error names the input and the offending position.
Result<Seconds> parse_duration(std::string_view text);

// The shortest form parse_duration reads back: 5400s -> "1h30m", 0 -> "0s".
std::string format_duration(Seconds duration);

}  // namespace taskd::core
