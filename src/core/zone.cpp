#include "core/zone.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "core/tzif.hpp"

namespace taskd::core {

struct TimeZone {
  std::string name;
  Tzif listed;                         // the offsets its TZif file lists
  std::optional<PosixTz> rule;         // the file's closing rule, when it has DST
  std::chrono::sys_seconds rule_from;  // where the listed changes end
};

namespace {

using std::chrono::seconds;
using std::chrono::sys_seconds;

// The first and last instants a zone's offset periods span; the changes some
// files list at the dawn of time (-2^59 s) count from the first.
constexpr sys_seconds earliest{date::sys_days{date::year::min() / 1 / 1}};
constexpr sys_seconds latest{date::sys_days{date::year::max() / 12 / 31}};

constexpr std::string_view zoneinfo_dir = "/usr/share/zoneinfo";
constexpr std::string_view system_zone_link = "/etc/localtime";
constexpr std::string_view system_zone_file = "/etc/timezone";

std::unexpected<Error> unknown_zone(std::string_view name) {
  return fail(ErrorKind::bad_input,
              fmt::format("unknown time zone \"{}\" (use an IANA name such as Europe/Berlin or UTC)", name));
}

bool is_zone_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '+' || c == '.';
}

// Words of letters, digits and "_-+." joined by single slashes, none starting
// with a dot: the name of a file below the zoneinfo directory, never above it.
bool is_zone_name(std::string_view name) {
  for (std::size_t start = 0; start <= name.size();) {
    auto end = std::min(name.find('/', start), name.size());
    auto word = name.substr(start, end - start);
    if (word.empty() || word.front() == '.' || !std::ranges::all_of(word, is_zone_name_char)) return false;
    start = end + 1;
  }
  return true;
}

// The bytes of a file; none when it cannot be read (a directory, say). A
// FIFO gives none instead of waiting for a writer.
std::optional<std::string> read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string bytes;
  std::array<char, 4096> buffer;
  ssize_t got = 0;
  while ((got = ::read(fd, buffer.data(), buffer.size())) > 0)
    bytes.append(buffer.data(), static_cast<std::size_t>(got));
  ::close(fd);
  if (got < 0) return std::nullopt;
  return bytes;
}

Result<std::unique_ptr<TimeZone>> load_zone(std::string_view name) {
  if (!is_zone_name(name)) return unknown_zone(name);
  const auto path = fmt::format("{}/{}", zoneinfo_dir, name);
  auto bytes = read_file(path);
  if (!bytes || !is_tzif(*bytes)) return unknown_zone(name);
  auto listed = parse_tzif(*bytes);
  if (!listed)
    return fail(ErrorKind::bad_input, fmt::format("time zone \"{}\": {}: {}", name, path, listed.error().message));
  const auto rule_from = listed->changes.empty() ? earliest : listed->changes.back().at;
  auto rule = parse_posix_tz(listed->footer);
  return std::make_unique<TimeZone>(TimeZone{std::string(name), std::move(*listed), rule, rule_from});
}

// One TimeZone per name, made at its first look-up.
Result<Zone> zone_named(std::string_view name) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<TimeZone>, std::less<>> zones;
  std::lock_guard lock(mutex);
  if (auto known = zones.find(name); known != zones.end()) return known->second.get();
  auto zone = TRY(load_zone(name));
  return zones.emplace(std::string(name), std::move(zone)).first->second.get();
}

// The zone name in a path below a zoneinfo directory: "Europe/Berlin" in
// "/usr/share/zoneinfo/Europe/Berlin" or "../usr/share/zoneinfo/Europe/Berlin";
// "" when there is none.
std::string name_below_zoneinfo(std::string_view path) {
  constexpr std::string_view dir = "zoneinfo/";
  const auto at = path.find(dir);
  return at == std::string_view::npos ? "" : std::string(path.substr(at + dir.size()));
}

// What a symbolic link points to; "" when `path` is none.
std::string link_target(std::string_view path) {
  std::array<char, PATH_MAX> target{};
  const auto length = ::readlink(std::string(path).c_str(), target.data(), target.size());
  if (length <= 0 || static_cast<std::size_t>(length) == target.size()) return "";
  return std::string(target.data(), static_cast<std::size_t>(length));
}

// The zone the system is set to: the one /etc/localtime links to, else the
// one the first line of /etc/timezone names, else UTC.
std::string configured_zone_name() {
  if (auto linked = name_below_zoneinfo(link_target(system_zone_link)); zone_named(linked)) return linked;
  const auto file = read_file(std::string(system_zone_file)).value_or("");
  if (auto named = file.substr(0, file.find('\n')); zone_named(named)) return named;
  return "UTC";
}

// The zone name TZ gives, as glibc reads it: "NAME" or ":NAME", or the path
// of a zone file below a zoneinfo directory or of a link to one, with
// /etc/localtime meaning the system's zone.
std::string name_in_tz(std::string_view tz) {
  if (tz.starts_with(':')) tz.remove_prefix(1);
  if (tz == system_zone_link) return configured_zone_name();
  if (!tz.starts_with('/')) return std::string(tz);
  if (auto name = name_below_zoneinfo(tz); !name.empty()) return name;
  if (auto name = name_below_zoneinfo(link_target(tz)); !name.empty()) return name;
  return std::string(tz);
}

// The offset period that holds `t` among the changes the file lists.
OffsetPeriod listed_period(const Tzif& listed, sys_seconds t) {
  const auto& changes = listed.changes;
  const auto next = std::ranges::upper_bound(changes, t, {}, &ListedChange::at);
  const bool first = next == changes.begin();
  return {first ? earliest : std::max(std::prev(next)->at, earliest), next == changes.end() ? latest : next->at,
          first ? listed.initial_offset : std::prev(next)->offset};
}

}  // namespace

Result<Zone> find_zone(std::string_view name) {
  if (!name.empty()) return zone_named(name);
  const char* tz = std::getenv("TZ");
  if (!tz || *tz == '\0') return zone_named(configured_zone_name());
  auto zone = zone_named(name_in_tz(tz));
  if (!zone) return fail(ErrorKind::bad_input, fmt::format("TZ=\"{}\": {}", tz, zone.error().message));
  return zone;
}

namespace {

// The period of the zone's closing rule that holds `t`. The rule computes
// three years' changes at each call, and a schedule asks for the same period
// slot after slot: the ones each thread got last are kept.
OffsetPeriod rule_period(Zone zone, sys_seconds t) {
  // A few: a walk asks about the day before a slot and the periods around a
  // change as well as the slot's own.
  struct Kept {
    Zone zone = nullptr;
    OffsetPeriod period{};
  };
  thread_local std::array<Kept, 4> kept{};
  thread_local std::size_t oldest = 0;
  for (const auto& k : kept)
    if (k.zone == zone && k.period.begin <= t && t < k.period.end) return k.period;
  auto period = posix_tz_period(*zone->rule, t);
  period.begin = std::max(period.begin, zone->rule_from);
  kept[oldest] = {zone, period};
  oldest = (oldest + 1) % kept.size();
  return period;
}

}  // namespace

OffsetPeriod offset_period(Zone zone, sys_seconds t) {
  if (zone->rule && t >= zone->rule_from) return rule_period(zone, t);
  return listed_period(zone->listed, t);
}

std::string zone_name(Zone zone) { return zone->name; }

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

TimeStyle time_style(Zone zone, Time now) {
  if (!zone) return {};
  return {zone, offset_period(zone, std::chrono::floor<seconds>(now)).offset};
}

Time clock_period_start(Time t, Seconds length, Zone zone) {
  const auto instant = std::chrono::floor<seconds>(t);
  const LocalTime local = zone ? to_local(zone, t) : LocalTime{instant.time_since_epoch()};
  const auto midnight = std::chrono::floor<date::days>(local);
  const auto into_day = local - midnight;
  const LocalTime start = midnight + (length < date::days{1} ? into_day - into_day % length : seconds{0});
  if (!zone) return Time{start.time_since_epoch()};
  return resolve_local(zone, start).first;
}

std::string show_time(Time t, const TimeStyle& style, Precision precision) {
  if (!style.zone) return format_rfc3339(t, precision);
  const auto offset = offset_period(style.zone, std::chrono::floor<seconds>(t)).offset;
  auto text = format_rfc3339(t + offset, precision);
  text[10] = ' ';
  text.pop_back();  // the 'Z'
  if (offset == style.usual_offset && !style.always_offset) return text;
  const auto minutes = std::chrono::abs(std::chrono::duration_cast<std::chrono::minutes>(offset)).count();
  return fmt::format("{}{}{:02}:{:02}", text, offset < seconds{0} ? '-' : '+', minutes / 60, minutes % 60);
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

std::string_view to_string(DstGap gap) { return gap == DstGap::run_after ? "run-after" : "skip"; }

std::string_view to_string(DstRepeat repeat) { return repeat == DstRepeat::once ? "once" : "twice"; }

Result<DstGap> parse_dst_gap(std::string_view text) {
  for (auto gap : {DstGap::run_after, DstGap::skip}) {
    if (text == to_string(gap)) return gap;
  }
  return fail(ErrorKind::bad_input, fmt::format("\"{}\" is not a DST gap rule (run-after or skip)", text));
}

Result<DstRepeat> parse_dst_repeat(std::string_view text) {
  for (auto repeat : {DstRepeat::once, DstRepeat::twice}) {
    if (text == to_string(repeat)) return repeat;
  }
  return fail(ErrorKind::bad_input, fmt::format("\"{}\" is not a DST repeat rule (once or twice)", text));
}

namespace {

// The wall time from which a schedule looks for its next run at `instant`:
// the clock's, but with DstRepeat::once past the wall times the clock showed
// already before a change that set it back.
LocalTime first_wall_to_run(Zone zone, const OffsetPeriod& period, sys_seconds instant, DstRepeat repeat) {
  const LocalTime wall{(instant + period.offset).time_since_epoch()};
  if (repeat == DstRepeat::twice) return wall;
  const auto before = offset_period(zone, period.begin - seconds{1}).offset;
  return std::max(wall, LocalTime{(period.begin + before).time_since_epoch()});
}

// Whether `wall`, which comes after the period, falls in a gap at its end.
bool in_gap_at_end(Zone zone, const OffsetPeriod& period, LocalTime wall) {
  const auto after = offset_period(zone, period.end).offset;
  return wall < LocalTime{(period.end + after).time_since_epoch()};
}

}  // namespace

std::optional<Time> next_on_wall_clock(Zone zone, Time t, const NextWallTime& next_wall, DstRule rule) {
  // Within one offset period wall time and instants advance together.
  auto instant = std::chrono::floor<seconds>(t) + seconds{1};
  // The period of `t` itself: when a gap ends right after `t`, its wall
  // times still run at its end (run-after).
  auto period = offset_period(zone, instant - seconds{1});
  for (const auto horizon = instant + calendar_search_horizon; instant < horizon;
       period = offset_period(zone, instant)) {
    auto wall = next_wall(first_wall_to_run(zone, period, instant, rule.repeat));
    if (!wall) return std::nullopt;
    const auto run = sys_seconds{wall->time_since_epoch() - period.offset};
    if (run < period.end) return run;
    if (rule.gap == DstGap::run_after && in_gap_at_end(zone, period, *wall)) return period.end;
    instant = period.end;
  }
  return std::nullopt;
}

}  // namespace taskd::core
