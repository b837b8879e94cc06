#pragma once
// Time zones (IANA names, from the TZif files below /usr/share/zoneinfo) and
// the three cases a wall-clock time can be in: it names one instant, none (it
// falls in a DST gap), or two (it falls in a repeated hour).
//
// A TZif file lists a zone's changes up to some year (2037 in Debian's) and
// ends with the POSIX TZ rule that tells the later ones: a zone here follows
// the listed changes, then that rule. Finding a zone reads its file (and, for
// the system's zone, TZ and /etc).
#include <date/date.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/posix_tz.hpp"
#include "core/time.hpp"

namespace taskd::core {

struct TimeZone;
// Zones live as long as the program; a Zone is a handle to one.
using Zone = const TimeZone*;
using LocalTime = date::local_seconds;

// A zone by IANA name ("Europe/Berlin", "UTC"); the first look-up of a name
// reads its TZif file, later ones do not. A name that is no TZif file below
// the zoneinfo directory (or would leave it: "..", "/etc/passwd") is unknown.
// "" is the system's zone: the one TZ names when it is set and not empty
// ("Europe/Berlin", ":Europe/Berlin", a path below a zoneinfo directory, or
// ":/etc/localtime"), an error when that is no zone; else the zone
// /etc/localtime links to, else the one /etc/timezone names, else UTC.
Result<Zone> find_zone(std::string_view name);

// The UTC offset in force at `t`, and the span it holds for.
OffsetPeriod offset_period(Zone zone, std::chrono::sys_seconds t);

// The zone's name as the user would write it back.
std::string zone_name(Zone zone);

// A wall-clock time as "2026-11-21T14:00:00", and back (a trailing offset or
// "Z" is refused: the time belongs to the task's zone).
std::string format_local(LocalTime local);
Result<LocalTime> parse_local(std::string_view text);

// The wall-clock time at `t` in `zone`, to the second.
LocalTime to_local(Zone zone, Time t);

enum class LocalKind { unique, skipped, repeated };

struct LocalInstants {
  LocalKind kind;
  // unique: the instant; skipped: the end of the gap (the first instant after
  // it); repeated: the earlier of the two instants.
  Time first;
  // repeated: the later instant; otherwise equal to `first`.
  Time second;
};

// The instants a wall-clock time names in `zone`.
LocalInstants resolve_local(Zone zone, LocalTime local);

// The first wall-clock time at or after the given one that a schedule names;
// none when it names no more.
using NextWallTime = std::function<std::optional<LocalTime>(LocalTime)>;

// The first instant strictly after `t` at which a schedule that follows the
// clock runs: every instant whose wall-clock time it names, so a wall time
// the clock skips never comes and one the clock shows twice comes twice.
std::optional<Time> next_following_clock(Zone zone, Time t, const NextWallTime& next_wall);

// The first instant strictly after `t` at which a fixed-time schedule runs:
// once per wall time it names, at the end of the gap when the clock skips it,
// at its first instant when the clock shows it twice.
std::optional<Time> next_fixed_time(Zone zone, Time t, const NextWallTime& next_wall);

}  // namespace taskd::core
