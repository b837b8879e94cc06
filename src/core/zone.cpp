#include "core/zone.hpp"

#include <fmt/format.h>

namespace taskd::core {
namespace {

// The Gregorian calendar repeats every 400 years: a schedule whose next wall
// time lies further away has none.
constexpr std::chrono::days search_horizon{400 * 366};

}  // namespace

Result<Zone> find_zone(std::string_view name) {
  try {
    if (name.empty()) return date::current_zone();
    return date::locate_zone(name);
  } catch (const std::exception&) {
    return fail(ErrorKind::bad_input,
                fmt::format("unknown time zone \"{}\" (use an IANA name such as Europe/Berlin or UTC)", name));
  }
}

std::string zone_name(Zone zone) { return std::string(zone->name()); }

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
  return zone->to_local(std::chrono::floor<std::chrono::seconds>(t));
}

LocalInstants resolve_local(Zone zone, LocalTime local) {
  auto info = zone->get_info(local);
  auto instant = [&](const date::sys_info& offset) {
    return Time{std::chrono::sys_seconds{local.time_since_epoch() - offset.offset}};
  };
  switch (info.result) {
    case date::local_info::unique: return {LocalKind::unique, instant(info.first), instant(info.first)};
    case date::local_info::nonexistent: {
      Time gap_end{info.first.end};
      return {LocalKind::skipped, gap_end, gap_end};
    }
    case date::local_info::ambiguous: return {LocalKind::repeated, instant(info.first), instant(info.second)};
  }
  return {LocalKind::unique, instant(info.first), instant(info.first)};
}

std::optional<Time> next_following_clock(Zone zone, Time t, const NextWallTime& next_wall) {
  // Within one offset period wall time and instants advance together.
  auto instant = std::chrono::floor<std::chrono::seconds>(t) + std::chrono::seconds{1};
  for (const auto horizon = instant + search_horizon; instant < horizon;) {
    const auto period = zone->get_info(instant);
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
