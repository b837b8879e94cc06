#pragma once
// Instants on the UTC timeline and their RFC 3339 spelling.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace taskd::core {

using Millis = std::chrono::milliseconds;
// Every instant taskd keeps: Unix time in milliseconds.
using Time = std::chrono::sys_time<Millis>;

enum class Precision { seconds, milliseconds };

// "2026-11-21T14:00:00Z", or "…T14:00:00.137Z" with Precision::milliseconds.
std::string format_rfc3339(Time time, Precision precision = Precision::seconds);

// Reads RFC 3339 with a "Z" or "±HH:MM" offset and optional fractional seconds.
Result<Time> parse_rfc3339(std::string_view text);

constexpr std::int64_t to_unix_ms(Time time) { return time.time_since_epoch().count(); }
constexpr Time from_unix_ms(std::int64_t ms) { return Time{Millis{ms}}; }

}  // namespace taskd::core
