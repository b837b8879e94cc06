#include "core/set_dates.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <ranges>
#include <span>

#include "core/recent_cache.hpp"

namespace taskd::core {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

std::unexpected<Error> bad_date(std::string_view item, bool days_allowed) {
  return fail(ErrorKind::bad_input,
              fmt::format("\"{}\" is not a date and time (write e.g. 2026-12-24T09:00, 2026-12-24 09:00, "
                          "2026-12-24T09:00+01:00{})",
                          item, days_allowed ? " or a day, 2026-12-25" : ""));
}

// After the date and the time of day: an offset ("Z", "+01:00").
bool has_offset(std::string_view time_of_day) {
  return time_of_day.ends_with('Z') || time_of_day.ends_with('z') ||
         time_of_day.find_first_of("+-") != std::string_view::npos;
}

Result<SetDate> parse_set_date(std::string_view item, bool days_allowed) {
  if (item.size() == 10) {
    if (!days_allowed) return bad_date(item, days_allowed);
    auto midnight = parse_local(std::string(item) + "T00:00:00");
    if (!midnight) return bad_date(item, days_allowed);
    return std::chrono::floor<date::days>(*midnight);
  }
  if (item.size() < 16 || (item[10] != 'T' && item[10] != 't' && item[10] != ' ')) return bad_date(item, days_allowed);
  std::string text(item);
  text[10] = 'T';
  if (text.size() == 16 || text[16] != ':') text.insert(16, ":00");  // HH:MM
  if (has_offset(std::string_view(text).substr(11))) {
    auto instant = parse_rfc3339(text);
    if (!instant) return bad_date(item, days_allowed);
    return *instant;
  }
  auto wall = parse_local(text);
  if (!wall) return bad_date(item, days_allowed);
  return *wall;
}

// As RFC 5545 (3.3.5) reads a wall time: one the clock shows twice is its
// first instant; one it skips is read with the offset before the gap, which
// moves it forward by the gap's length (as a recurrence rule's slot there).
Time first_instant(Zone zone, LocalTime wall) {
  const auto instants = resolve_local(zone, wall);
  if (instants.kind != LocalKind::skipped) return instants.first;
  const auto gap_end = std::chrono::floor<std::chrono::seconds>(instants.first);
  const auto before = offset_period(zone, gap_end - std::chrono::seconds{1}).offset;
  return Time{(wall - before).time_since_epoch()};
}

Time instant_of(Zone zone, const SetDate& date) {
  if (const auto* wall = std::get_if<LocalTime>(&date)) return first_instant(zone, *wall);
  return std::get<Time>(date);
}

// The slots a removed time removes: an instant, or every instant a wall time
// may have become. A wall time the clock shows twice is both its instants (a
// schedule that runs twice then ran at both); one the clock skips is the end
// of the gap, where a schedule runs it (the time later by the gap's length,
// where an added date is read, may be a slot of its own).
std::vector<Time> removed_instants(Zone zone, const SetDate& date) {
  const auto* wall = std::get_if<LocalTime>(&date);
  if (!wall) return {std::get<Time>(date)};
  const auto instants = resolve_local(zone, *wall);
  if (instants.kind == LocalKind::repeated) return {instants.first, instants.second};
  return {instants.first};
}

bool within(const std::pair<Time, Time>& span, Time t) { return span.first <= t && t < span.second; }

char to_upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

std::string upper(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(), to_upper);
  return out;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> items;
  for (std::size_t start = 0;;) {
    const auto end = text.find(separator, start);
    items.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return items;
    start = end + 1;
  }
}

// One line of the iCalendar form: NAME;PARAM=V;...:VALUE.
struct Property {
  std::string name;
  std::string tzid;
  bool date_value = false;  // VALUE=DATE
  std::string_view value;
};

Result<Property> parse_property(std::string_view line) {
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return Property{"RRULE", "", false, line};
  auto parts = split(line.substr(0, colon), ';');
  Property property{upper(trim(parts.front())), "", false, trim(line.substr(colon + 1))};
  for (auto part : std::span(parts).subspan(1)) {
    const auto parameter = upper(trim(part));
    if (parameter.starts_with("TZID=")) {
      property.tzid = std::string(trim(part).substr(5));
    } else if (parameter == "VALUE=DATE" || parameter == "VALUE=DATE-TIME") {
      property.date_value = parameter == "VALUE=DATE";
    } else {
      return fail(ErrorKind::bad_input,
                  fmt::format("{}: parameter {} is not one taskd reads (TZID, VALUE)", property.name, trim(part)));
    }
  }
  return property;
}

// "20261224T090000", "20261224T090000Z", "20261224" (a day).
Result<SetDate> parse_ical_time(std::string_view text) {
  auto bad = [&] {
    return fail(
        ErrorKind::bad_input,
        fmt::format("\"{}\" is not an iCalendar date-time (20261224T090000, 20261224T090000Z or 20261224)", text));
  };
  const auto digits = [&](std::size_t from, std::size_t count) {
    return text.size() >= from + count &&
           std::ranges::all_of(text.substr(from, count), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!digits(0, 8)) return bad();
  auto date = fmt::format("{}-{}-{}", text.substr(0, 4), text.substr(4, 2), text.substr(6, 2));
  if (text.size() == 8) {
    auto day = parse_set_date(date, true);
    if (!day) return bad();
    return *day;
  }
  const bool utc = text.size() == 16 && to_upper(text[15]) == 'Z';
  if ((text.size() != 15 && !utc) || to_upper(text[8]) != 'T' || !digits(9, 6)) return bad();
  auto time = parse_set_date(
      fmt::format("{}T{}:{}:{}{}", date, text.substr(9, 2), text.substr(11, 2), text.substr(13, 2), utc ? "Z" : ""),
      false);
  if (!time) return bad();
  return *time;
}

// A property's times, each a wall time of `zone` (the set's), or an instant
// where it is in another zone or in UTC.
Result<std::vector<SetDate>> property_times(const Property& property, std::string_view zone, bool days_allowed) {
  std::optional<Zone> own_zone;
  if (!property.tzid.empty() && property.tzid != zone) own_zone = TRY(find_zone(property.tzid));
  std::vector<SetDate> times;
  for (auto item : split(property.value, ',')) {
    auto time = TRY(parse_ical_time(trim(item)));
    const bool day = std::holds_alternative<date::local_days>(time);
    if (day && !days_allowed)
      return fail(ErrorKind::bad_input, fmt::format("\"{}\" is a date without a time of day", trim(item)));
    if (property.date_value && !day) return fail(ErrorKind::bad_input, "VALUE=DATE takes dates (20261225)");
    if (const auto* wall = std::get_if<LocalTime>(&time); wall && own_zone) time = first_instant(*own_zone, *wall);
    times.push_back(time);
    if (times.size() > max_set_dates)
      return fail(ErrorKind::bad_input, fmt::format("more than {} dates", max_set_dates));
  }
  return times;
}

Result<void> read_dtstart(const Property& property, RecurrenceSet& set) {
  if (set.dtstart) return fail(ErrorKind::bad_input, "more than one DTSTART line");
  auto time = TRY(parse_ical_time(property.value));
  if (std::holds_alternative<date::local_days>(time))
    return fail(ErrorKind::bad_input, fmt::format("DTSTART: \"{}\" is a date without a time of day", property.value));
  if (const auto* instant = std::get_if<Time>(&time)) {
    if (!property.tzid.empty()) return fail(ErrorKind::bad_input, "DTSTART: a time in UTC (Z) takes no TZID");
    set.zone = "UTC";
    set.dtstart = LocalTime{std::chrono::floor<std::chrono::seconds>(*instant).time_since_epoch()};
    return {};
  }
  if (!property.tzid.empty()) TRY(find_zone(property.tzid));
  set.zone = property.tzid;
  set.dtstart = std::get<LocalTime>(time);
  return {};
}

Result<void> read_line(const Property& property, RecurrenceSet& set, std::vector<Property>& date_lines) {
  if (property.name == "DTSTART") return read_dtstart(property, set);
  if (property.name == "RRULE") {
    if (!set.rule.empty()) return fail(ErrorKind::bad_input, "more than one RRULE line (a task has one rule)");
    if (property.value.empty()) return fail(ErrorKind::bad_input, "RRULE: an empty rule");
    set.rule = std::string(property.value);
    return {};
  }
  if (property.name == "RDATE" || property.name == "EXDATE") {
    date_lines.push_back(property);
    return {};
  }
  return fail(ErrorKind::bad_input,
              fmt::format("{}: not a line taskd reads (DTSTART, RRULE, RDATE, EXDATE)", property.name));
}

}  // namespace

std::pair<Time, Time> day_span(Zone zone, date::local_days day) {
  return {first_instant(zone, LocalTime{day}), first_instant(zone, LocalTime{day + date::days{1}})};
}

bool is_recurrence_set(std::string_view text) {
  const auto first = upper(trim(text).substr(0, 7));
  return trim(text).find_first_of("\r\n") != std::string_view::npos || first.starts_with("DTSTART") ||
         first.starts_with("RDATE") || first.starts_with("EXDATE");
}

Result<RecurrenceSet> parse_recurrence_set(std::string_view text) {
  RecurrenceSet set;
  std::vector<Property> date_lines;
  for (auto line : split(text, '\n')) {
    line = trim(line);
    if (line.empty()) continue;
    auto property = parse_property(line);
    if (!property) return fail(ErrorKind::bad_input, fmt::format("line \"{}\": {}", line, property.error().message));
    if (auto read = read_line(*property, set, date_lines); !read)
      return fail(ErrorKind::bad_input, fmt::format("line \"{}\": {}", line, read.error().message));
  }
  if (set.rule.empty()) return fail(ErrorKind::bad_input, "no RRULE line");
  // RDATE and EXDATE lines read once DTSTART has given the set's zone.
  for (const auto& property : date_lines) {
    const bool removed = property.name == "EXDATE";
    auto times = property_times(property, set.zone, removed);
    if (!times) return fail(ErrorKind::bad_input, fmt::format("{}: {}", property.name, times.error().message));
    auto& into = removed ? set.exdate : set.rdate;
    into.insert(into.end(), times->begin(), times->end());
  }
  return set;
}

Result<std::vector<SetDate>> parse_set_dates(std::string_view text, bool days_allowed) {
  std::vector<SetDate> dates;
  if (trim(text).empty()) return dates;
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    const auto item = trim(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
    dates.push_back(TRY(parse_set_date(item, days_allowed)));
    if (dates.size() > max_set_dates)
      return fail(ErrorKind::bad_input, fmt::format("more than {} dates", max_set_dates));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  std::ranges::sort(dates);
  dates.erase(std::ranges::unique(dates).begin(), dates.end());
  return dates;
}

std::string to_string(const SetDate& date) {
  if (const auto* wall = std::get_if<LocalTime>(&date)) return format_local(*wall);
  if (const auto* instant = std::get_if<Time>(&date)) return format_rfc3339(*instant);
  return date::format("%F", std::get<date::local_days>(date));
}

std::string set_dates_text(const std::vector<SetDate>& dates) {
  std::string text;
  for (const auto& date : dates) {
    if (!text.empty()) text += ',';
    text += to_string(date);
  }
  return text;
}

namespace {

std::vector<std::pair<Time, Time>> day_spans(Zone zone, const std::vector<date::local_days>& days) {
  std::vector<std::pair<Time, Time>> spans;
  spans.reserve(days.size());
  for (auto day : days) spans.push_back(day_span(zone, day));
  return spans;
}

std::string_view bytes_of(const std::vector<date::local_days>& days) {
  return {reinterpret_cast<const char*>(days.data()), days.size() * sizeof(date::local_days)};
}

std::size_t days_hash(const CalendarDays& days, Zone zone) {
  std::size_t hash = std::hash<Zone>{}(zone) ^ sampled_hash(bytes_of(days.skipped));
  return days.kept ? hash ^ (sampled_hash(bytes_of(*days.kept)) * 31) : hash;
}

struct ZonedDays {
  CalendarDays days;
  Zone zone;
};

// The key looked for, without a copy of the days.
struct ZonedDaysView {
  const CalendarDays& days;
  Zone zone;
};

bool operator==(const ZonedDays& kept, const ZonedDaysView& sought) {
  return kept.zone == sought.zone && kept.days == sought.days;
}
bool operator==(const ZonedDays& a, const ZonedDays& b) { return a == ZonedDaysView{b.days, b.zone}; }

// A host's calendars in each zone its tasks use.
constexpr std::size_t kept_calendars = 16;

}  // namespace

std::shared_ptr<const CalendarSpans> calendar_spans(const CalendarDays& days, Zone zone) {
  static RecentCache<ZonedDays, CalendarSpans> cache(kept_calendars);
  const auto hash = days_hash(days, zone);
  if (auto spans = cache.find(hash, ZonedDaysView{days, zone})) return spans;
  auto spans = std::make_shared<const CalendarSpans>(
      day_spans(zone, days.skipped), days.kept ? std::optional(day_spans(zone, *days.kept)) : std::nullopt);
  cache.insert(hash, ZonedDays{days, zone}, spans);
  return spans;
}

SlotChanges::SlotChanges(const std::vector<SetDate>& added, const std::vector<SetDate>& removed, Zone zone,
                         const CalendarDays& calendars) {
  for (const auto& date : removed) {
    if (const auto* day = std::get_if<date::local_days>(&date))
      removed_days_.push_back(day_span(zone, *day));
    else
      std::ranges::copy(removed_instants(zone, date), std::back_inserter(removed_));
  }
  if (!calendars.empty()) calendar_ = calendar_spans(calendars, zone);
  std::ranges::sort(removed_);
  std::ranges::sort(removed_days_);
  removed_days_.erase(std::ranges::unique(removed_days_).begin(), removed_days_.end());
  for (const auto& date : added) {
    const auto slot = instant_of(zone, date);
    if (!removal(slot)) added_.push_back(slot);
  }
  std::ranges::sort(added_);
  added_.erase(std::ranges::unique(added_).begin(), added_.end());
}

std::optional<Time> SlotChanges::first_added_after(Time t) const {
  auto next = std::ranges::upper_bound(added_, t);
  if (next == added_.end()) return std::nullopt;
  return *next;
}

namespace {

// The last of the sorted `days` starting at or before `t`, if it holds `t`
// (days of one zone do not overlap), else the first after `t` (or end).
auto day_holding_or_after(const std::vector<std::pair<Time, Time>>& days, Time t) {
  auto after = std::ranges::upper_bound(days, t, {}, &std::pair<Time, Time>::first);
  if (after != days.begin() && within(*std::prev(after), t)) return std::prev(after);
  return after;
}

// The removed day among `days` that holds `slot`.
std::optional<std::pair<Time, Time>> day_holding(const std::vector<std::pair<Time, Time>>& days, Time slot) {
  auto day = day_holding_or_after(days, slot);
  if (day == days.end() || !within(*day, slot)) return std::nullopt;
  return *day;
}

}  // namespace

std::optional<SlotChanges::Removed> SlotChanges::removal(Time slot) const {
  if (std::ranges::binary_search(removed_, slot)) return Removed{slot};
  auto removed_day = day_holding(removed_days_, slot);
  if (!removed_day && calendar_) removed_day = day_holding(calendar_->skipped, slot);
  if (removed_day) return Removed{removed_day->second - Millis{1}};
  if (!calendar_ || !calendar_->kept) return std::nullopt;
  const auto& kept_days = *calendar_->kept;
  auto kept = day_holding_or_after(kept_days, slot);
  if (kept == kept_days.end()) return Removed{std::nullopt};
  if (within(*kept, slot)) return std::nullopt;
  return Removed{kept->first - Millis{1}};
}

namespace {

Millis overlap(const std::pair<Time, Time>& day, Time from, Time to) {
  return std::max(Millis{0}, std::min(day.second, to) - std::max(day.first, from));
}

}  // namespace

bool SlotChanges::removes_day(const std::pair<Time, Time>& day) const {
  return std::ranges::binary_search(removed_days_, day) ||
         (calendar_ && std::ranges::binary_search(calendar_->skipped, day));
}

Millis SlotChanges::time_off(Time from, Time to) const {
  if (to <= from) return Millis{0};
  auto days_within = [&](const std::vector<std::pair<Time, Time>>& days) {
    return std::ranges::subrange(day_holding_or_after(days, from), days.end()) |
           std::views::take_while([&](const auto& day) { return day.first < to; });
  };
  // Days of one zone are the same spans or apart: an --exdate day in a
  // calendar counts once, and a kept day is off when it is also removed.
  Millis off{0};
  if (!calendar_ || !calendar_->kept) {
    static const std::vector<std::pair<Time, Time>> none;
    const auto& skipped = calendar_ ? calendar_->skipped : none;
    for (const auto& day : days_within(skipped)) off += overlap(day, from, to);
    for (const auto& day : days_within(removed_days_))
      if (!std::ranges::binary_search(skipped, day)) off += overlap(day, from, to);
    return off;
  }
  Millis kept{0};
  for (const auto& day : days_within(*calendar_->kept))
    if (!removes_day(day)) kept += overlap(day, from, to);
  return (to - from) - kept;
}

namespace {

// "skip 2026-12-24,+1,+3": the first day, then each as days after the one
// before it, so that a calendar of 10 000 days is 30 kB to read and compare
// at each claim, not 110.
std::string days_line(std::string_view label, const std::vector<date::local_days>& days) {
  std::string line(label);
  for (std::size_t i = 0; i < days.size(); ++i) {
    if (i == 0) {
      line += " " + date::format("%F", days[i]);
    } else {
      fmt::format_to(std::back_inserter(line), ",+{}", (days[i] - days[i - 1]).count());
    }
  }
  return line;
}

// "YYYY-MM-DD", read by hand: a task's calendar days are read at every claim.
std::optional<date::local_days> stored_day(std::string_view text) {
  auto number = [&](std::size_t at, std::size_t digits) -> std::optional<int> {
    int value = 0;
    auto [end, error] = std::from_chars(text.data() + at, text.data() + at + digits, value);
    if (error != std::errc() || end != text.data() + at + digits) return std::nullopt;
    return value;
  };
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return std::nullopt;
  auto year = number(0, 4), month = number(5, 2), day = number(8, 2);
  if (!year || !month || !day) return std::nullopt;
  date::year_month_day ymd{date::year{*year}, date::month(static_cast<unsigned>(*month)),
                           date::day(static_cast<unsigned>(*day))};
  if (!ymd.ok()) return std::nullopt;
  return date::local_days{ymd};
}

// "+3" after `previous`: the day three days later.
std::optional<date::local_days> day_after(std::string_view item, const std::vector<date::local_days>& previous) {
  int count = 0;
  if (previous.empty() || item.size() < 2 || item[0] != '+') return std::nullopt;
  auto [end, error] = std::from_chars(item.data() + 1, item.data() + item.size(), count);
  if (error != std::errc() || end != item.data() + item.size() || count < 1 || count > 1'000'000) return std::nullopt;
  return previous.back() + date::days{count};
}

Result<std::vector<date::local_days>> stored_days(std::string_view list) {
  std::vector<date::local_days> days;
  while (!list.empty()) {
    auto comma = list.find(',');
    auto item = list.substr(0, comma);
    auto day = item.starts_with('+') ? day_after(item, days) : stored_day(item);
    if (!day)
      return fail(ErrorKind::bad_input,
                  fmt::format("\"{}\" is not a day (YYYY-MM-DD, or +N days after the one before)", item));
    days.push_back(*day);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  if (!std::ranges::is_sorted(days)) return fail(ErrorKind::bad_input, "the days are not sorted");
  return days;
}

}  // namespace

std::string calendar_days_text(const CalendarDays& days) {
  std::string text;
  if (!days.skipped.empty()) text = days_line("skip", days.skipped);
  if (days.kept) text += (text.empty() ? "" : "\n") + days_line("only", *days.kept);
  return text;
}

namespace {

Result<CalendarDays> read_calendar_days(std::string_view text) {
  CalendarDays days;
  while (!text.empty()) {
    auto end = text.find('\n');
    auto line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    auto list = line.size() > 4 ? line.substr(5) : std::string_view{};
    if (line.starts_with("skip ")) {
      days.skipped = TRY(stored_days(list));
    } else if (line == "only" || line.starts_with("only ")) {
      days.kept = TRY(stored_days(list));
    } else {
      return fail(ErrorKind::bad_input, "expected lines \"skip DAYS\" and \"only DAYS\"");
    }
  }
  return days;
}

}  // namespace

Result<CalendarDays> parse_calendar_days(std::string_view text) {
  if (text.empty()) return CalendarDays{};
  static RecentCache<std::string, CalendarDays> cache(kept_calendars);
  const auto hash = sampled_hash(text);
  if (auto days = cache.find(hash, text)) return *days;
  auto days = TRY(read_calendar_days(text));
  cache.insert(hash, std::string(text), std::make_shared<const CalendarDays>(days));
  return days;
}

std::optional<SetDate> removing_date(const std::vector<SetDate>& removed, Zone zone, Time slot) {
  for (const auto& date : removed) {
    const auto* day = std::get_if<date::local_days>(&date);
    if (day ? within(day_span(zone, *day), slot) : std::ranges::count(removed_instants(zone, date), slot) > 0)
      return date;
  }
  return std::nullopt;
}

}  // namespace taskd::core
