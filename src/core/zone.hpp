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

// How times are shown to people: in a zone, or (no zone) as RFC 3339 UTC.
struct TimeStyle {
  Zone zone = nullptr;
  // The zone's offset at the time of the command: a time shown in another
  // offset (across a DST change) carries its own.
  std::chrono::seconds usual_offset{0};
  // Every time carries its offset: for lines read away from this host's
  // clock (check's, on a monitoring server).
  bool always_offset = false;
};

// The style of `zone` (nullptr: UTC's) at `now`.
TimeStyle time_style(Zone zone, Time now);

// The start of the period of the clock of `zone` (nullptr: UTC's) that holds
// `t`, for periods of `length`: periods under a day start at midnight and
// follow each other (15m: at :00, :15, :30, :45), longer ones at midnight.
Time clock_period_start(Time t, Seconds length, Zone zone);

// "2026-11-21 15:00:00", "2026-03-29 03:00:00+02:00" where the offset is
// not the usual one; "2026-11-21T14:00:00Z" without a zone. Milliseconds,
// as `precision` says.
std::string show_time(Time t, const TimeStyle& style, Precision precision = Precision::exact);

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

// What a schedule on a wall clock does at DST changes (--dst-gap,
// --dst-repeat): a wall time the clock skips (it falls in a gap) runs right
// after the gap or not at all; one the clock shows twice runs at its first
// instant only or at both.
enum class DstGap { run_after, skip };
enum class DstRepeat { once, twice };

struct DstRule {
  DstGap gap;
  DstRepeat repeat;
  bool operator==(const DstRule&) const = default;
};

// "run-after" or "skip"; "once" or "twice".
std::string_view to_string(DstGap gap);
std::string_view to_string(DstRepeat repeat);
Result<DstGap> parse_dst_gap(std::string_view text);
Result<DstRepeat> parse_dst_repeat(std::string_view text);

// cronie's rule for a fixed time (and RFC 5545's for a recurrence rule).
inline constexpr DstRule fixed_time_dst{DstGap::run_after, DstRepeat::once};
// cronie's rule for a job whose hour field is '*': it follows the clock.
inline constexpr DstRule clock_following_dst{DstGap::skip, DstRepeat::twice};

// A task's choice; a part left unset is the schedule's own default.
struct DstPolicy {
  std::optional<DstGap> gap;
  std::optional<DstRepeat> repeat;
  bool operator==(const DstPolicy&) const = default;

  DstRule over(DstRule defaults) const { return {gap.value_or(defaults.gap), repeat.value_or(defaults.repeat)}; }
  bool any() const { return gap || repeat; }
};

// The first instant strictly after `t` at which a schedule of wall times
// runs under `rule`. Within one offset period each named wall time runs at
// its instant. A named wall time in a gap runs, with DstGap::run_after, at
// the end of the gap; several of them in one gap run once there, together
// with a wall time that names the end of the gap itself. A wall time the
// clock shows twice runs, with DstRepeat::once, at its first instant only.
std::optional<Time> next_on_wall_clock(Zone zone, Time t, const NextWallTime& next_wall, DstRule rule);

}  // namespace taskd::core
