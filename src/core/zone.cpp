#include "core/zone.hpp"

#include <fmt/format.h>

#include <array>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>

namespace taskd::core {

struct TimeZone {
  const date::time_zone* listed;  // the transitions its TZif file lists
  std::optional<PosixTz> rule;    // the file's closing rule, when it has DST
  std::chrono::sys_seconds rule_from;  // where the listed transitions end
};

namespace {

using std::chrono::seconds;
using std::chrono::sys_seconds;

// The Gregorian calendar repeats every 400 years: a schedule whose next wall
// time lies further away has none.
constexpr std::chrono::days search_horizon{400 * 366};

// Where date-tz, built to use the system's tzdata, reads the TZif files.
constexpr std::array<std::string_view, 2> tzif_dirs{"/usr/share/zoneinfo", "/etc/zoneinfo"};

// The POSIX TZ rule at the end of a TZif file of version 2 or later: the text
// between its last two newlines (RFC 8536, 3.3); "" when there is none.
std::string tzif_footer(const std::string& bytes) {
  if (bytes.size() < 6 || !bytes.starts_with("TZif") || bytes[4] < '2' || bytes.back() != '\n') return "";
  auto newline = bytes.rfind('\n', bytes.size() - 2);
  if (newline == std::string::npos) return "";
  return bytes.substr(newline + 1, bytes.size() - newline - 2);
}

std::optional<PosixTz> closing_rule(std::string_view name) {
  for (auto dir : tzif_dirs) {
    std::ifstream file(fmt::format("{}/{}", dir, name), std::ios::binary);
    if (!file) continue;
    const std::string bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
    return parse_posix_tz(tzif_footer(bytes));
  }
  return std::nullopt;
}

// The last transition the file lists: its offset holds forever for date-tz.
sys_seconds last_listed_transition(const date::time_zone* listed) {
  return listed->get_info(date::sys_days{date::year{3000} / 1 / 1}).begin;
}

// One TimeZone per IANA zone, made at its first look-up.
Zone zone_of(const date::time_zone* listed) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<TimeZone>, std::less<>> zones;
  std::lock_guard lock(mutex);
  auto& zone = zones[std::string(listed->name())];
  if (!zone)
    zone = std::make_unique<TimeZone>(TimeZone{listed, closing_rule(listed->name()), last_listed_transition(listed)});
  return zone.get();
}

}  // namespace

Result<Zone> find_zone(std::string_view name) {
  try {
    return zone_of(name.empty() ? date::current_zone() : date::locate_zone(name));
  } catch (const std::exception&) {
    return fail(ErrorKind::bad_input,
                fmt::format("unknown time zone \"{}\" (use an IANA name such as Europe/Berlin or UTC)", name));
  }
}

OffsetPeriod offset_period(Zone zone, sys_seconds t) {
  if (zone->rule && t >= zone->rule_from) {
    auto period = posix_tz_period(*zone->rule, t);
    period.begin = std::max(period.begin, zone->rule_from);
    return period;
  }
  const auto info = zone->listed->get_info(t);
  return {info.begin, info.end, info.offset};
}

std::string zone_name(Zone zone) { return std::string(zone->listed->name()); }

std::string format_local(LocalTime local) {
  std::string utc = format_rfc3339(Time{local.time_since_epoch()});
  utc.pop_back();  // the 'Z'
  return utc;
}

Result<LocalTime> parse_local(std::string_view text) {
  auto as_utc = parse_rfc3339(std::string(text) + "Z");
  if (!as_utc)
    return fail(ErrorKind::bad_input, fmt::format("invalid wall-clock time \"{}\" (write e.g. 2026-11-21T14:00:00)", text));
  return LocalTime{std::chrono::floor<std::chrono::seconds>(*as_utc).time_since_epoch()};
}

LocalTime to_local(Zone zone, Time t) {
  const auto instant = std::chrono::floor<seconds>(t);
  return LocalTime{(instant + offset_period(zone, instant).offset).time_since_epoch()};
}

LocalInstants resolve_local(Zone zone, LocalTime local) {
  // Every UTC offset is less than a day, so the instants `local` names lie
  // within a day of it read as UTC: look at the periods that cover that span.
  const sys_seconds as_utc{local.time_since_epoch()};
  std::array<Time, 2> named{};
  std::size_t count = 0;
  std::optional<sys_seconds> gap_end;
  bool past_previous = false;  // `local` read with the previous period's offset lies after its end
  for (auto period = offset_period(zone, as_utc - date::days{1});; period = offset_period(zone, period.end)) {
    const sys_seconds instant = as_utc - period.offset;
    if (instant < period.begin && past_previous && !gap_end) gap_end = period.begin;
    if (instant >= period.begin && instant < period.end && count < named.size()) named[count++] = instant;
    past_previous = instant >= period.end;
    if (period.end > as_utc + date::days{1}) break;
  }
  if (count == 2) return {LocalKind::repeated, named[0], named[1]};
  if (count == 1) return {LocalKind::unique, named[0], named[0]};
  const Time end = gap_end.value_or(as_utc);
  return {LocalKind::skipped, end, end};
}

std::optional<Time> next_following_clock(Zone zone, Time t, const NextWallTime& next_wall) {
  // Within one offset period wall time and instants advance together.
  auto instant = std::chrono::floor<std::chrono::seconds>(t) + std::chrono::seconds{1};
  for (const auto horizon = instant + search_horizon; instant < horizon;) {
    const auto period = offset_period(zone, instant);
    auto wall = next_wall(LocalTime{(instant + period.offset).time_since_epoch()});
    if (!wall) return std::nullopt;
    const auto run = date::sys_seconds{wall->time_since_epoch() - period.offset};
    if (run < period.end) return run;
    instant = period.end;
  }
  return std::nullopt;
}

std::optional<Time> next_fixed_time(Zone zone, Time t, const NextWallTime& next_wall) {
  // The runs never decrease as the wall time grows, so the first one after
  // `t` belongs to the first named wall time whose run is after `t`.
  auto wall = to_local(zone, t);
  while (auto next = next_wall(wall + std::chrono::seconds{1})) {
    const Time run = resolve_local(zone, *next).first;
    if (run > t) return run;
    wall = *next;
  }
  return std::nullopt;
}

}  // namespace taskd::core
