#pragma once
// POSIX TZ rules, as the footer of a TZif file writes them (RFC 8536, 3.3):
// "CET-1CEST,M3.5.0,M10.5.0/3". A TZif file lists its transitions only up
// to some year (2037 in Debian's); the rule tells the ones after it.
#include <chrono>
#include <optional>
#include <string_view>

namespace taskd::core {

// A UTC offset and the instants it holds for: [begin, end).
struct OffsetPeriod {
  std::chrono::sys_seconds begin;
  std::chrono::sys_seconds end;
  std::chrono::seconds offset;  // east of UTC
};

// The day of a year a transition falls on, in one of POSIX's three forms.
struct TransitionDay {
  enum class Form {
    julian,        // Jn: day 1..365, February 29 never counted
    zero_based,    // n: day 0..365, February 29 counted
    week_of_month  // Mm.w.d: weekday d (0 = Sunday) of week w (5 = last) of month m
  };
  Form form;
  int day = 0;  // julian, zero_based
  unsigned month = 0, week = 0, weekday = 0;
};

// When in a year a transition happens: a day and a local time on it (which
// may be negative or past 24h).
struct Transition {
  TransitionDay day;
  std::chrono::seconds time;
};

// A zone with daylight saving time: standard offset, DST offset, and when
// DST starts (in standard time) and ends (in DST).
struct PosixTz {
  std::chrono::seconds std_offset;
  std::chrono::seconds dst_offset;
  Transition dst_start;
  Transition dst_end;
};

// Reads a TZ string that has a DST part with its rules; none for a string
// without DST ("JST-9") or one that does not follow the grammar.
std::optional<PosixTz> parse_posix_tz(std::string_view text);

// The offset in force at `t` under the rule, and the span it holds for.
OffsetPeriod posix_tz_period(const PosixTz& tz, std::chrono::sys_seconds t);

}  // namespace taskd::core
