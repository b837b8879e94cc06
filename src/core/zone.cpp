#include "core/zone.hpp"

#include <fmt/format.h>

namespace taskd::core {

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

}  // namespace taskd::core
