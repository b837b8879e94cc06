#include "core/calendar.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace taskd::core {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
char to_upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

std::string upper(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(), to_upper);
  return out;
}

std::unexpected<Error> bad_line(std::string_view source, std::size_t line, std::string_view message) {
  return fail(ErrorKind::bad_input, fmt::format("{}:{}: {}", source, line, message));
}

// Digits "YYYY" "MM" "DD" as a day that exists.
std::optional<date::local_days> day_of(std::string_view year, std::string_view month, std::string_view day) {
  auto number = [](std::string_view digits) {
    int value = 0;
    for (char c : digits) {
      if (!is_digit(c)) return -1;
      value = value * 10 + (c - '0');
    }
    return value;
  };
  const date::year_month_day ymd{date::year{number(year)}, date::month(static_cast<unsigned>(number(month))),
                                 date::day(static_cast<unsigned>(number(day)))};
  if (number(year) < 1 || !ymd.ok()) return std::nullopt;
  return date::local_days{ymd};
}

// A day's name: one line, no control characters, at most max_date_name bytes.
Result<std::string> checked_name(std::string_view name) {
  if (name.size() > max_date_name)
    return fail(ErrorKind::bad_input, fmt::format("the day's name is longer than {} bytes", max_date_name));
  for (char c : name)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f)
      return fail(ErrorKind::bad_input, "the day's name has a control character");
  return std::string(name);
}

// Joins `name` to a day's `names` ("A; B") unless it is there already or
// the joined names would be longer than a name may be (they are read back
// as one): the day stays, the names that do not fit are left out.
void join_name(std::string& names, const std::string& name) {
  if (name.empty()) return;
  if (names.empty()) {
    names = name;
    return;
  }
  const std::string separated = "; " + name;
  bool there = names == name || names.starts_with(name + "; ") || names.ends_with(separated) ||
               names.find(separated + "; ") != std::string::npos;
  if (!there && names.size() + separated.size() <= max_date_name) names += separated;
}

// Sorted, a day given twice once with its names joined.
std::vector<CalendarDate> merged(std::vector<CalendarDate> dates) {
  std::ranges::stable_sort(dates, {}, &CalendarDate::day);
  std::vector<CalendarDate> out;
  for (auto& date : dates) {
    if (out.empty() || out.back().day != date.day) out.push_back(std::move(date));
    else join_name(out.back().name, date.name);
  }
  return out;
}

Result<void> check_count(std::size_t count, std::string_view source, std::size_t line) {
  if (count > max_calendar_dates)
    return bad_line(source, line, fmt::format("more than {} days in a calendar", max_calendar_dates));
  return {};
}

// Lines split at \n, each with its number (from 1).
template <class F>
Result<void> for_each_line(std::string_view text, F&& body) {
  std::size_t number = 0;
  for (std::size_t start = 0; start <= text.size();) {
    const auto end = std::min(text.find('\n', start), text.size());
    TRY(body(text.substr(start, end - start), ++number));
    start = end + 1;
  }
  return {};
}

// iCalendar's unfolded content lines, each with the number of the line it starts on.
struct ContentLine {
  std::string text;
  std::size_t number;
};

std::vector<ContentLine> unfolded(std::string_view text) {
  std::vector<ContentLine> lines;
  (void)for_each_line(text, [&](std::string_view line, std::size_t number) -> Result<void> {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty() && (line.front() == ' ' || line.front() == '\t') && !lines.empty())
      lines.back().text += line.substr(1);
    else
      lines.push_back({std::string(line), number});
    return {};
  });
  return lines;
}

// NAME;PARAM=V;...:VALUE, with quoted parameter values that may hold ':' or ';'.
struct Property {
  std::string name;
  std::vector<std::string> parameters;  // upper case
  std::string_view value;
};

std::optional<Property> parse_property(std::string_view line) {
  Property property;
  bool quoted = false;
  std::size_t start = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"') quoted = !quoted;
    if (quoted || (c != ';' && c != ':')) continue;
    auto part = upper(line.substr(start, i - start));
    if (property.name.empty() && start == 0)
      property.name = std::move(part);
    else
      property.parameters.push_back(std::move(part));
    start = i + 1;
    if (c == ':') {
      property.value = line.substr(i + 1);
      return property.name.empty() ? std::nullopt : std::optional(property);
    }
  }
  return std::nullopt;
}

// TEXT's escapes (\\ \, \; \n \N) undone; a line break is a space.
std::string unescaped(std::string_view value) {
  std::string out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '\\' || i + 1 == value.size()) {
      out += value[i];
      continue;
    }
    const char next = value[++i];
    out += next == 'n' || next == 'N' ? ' ' : next;
  }
  return std::string(trim(out));
}

// DTSTART's value: 20261225 or 20261225T090000[Z]: its date.
std::optional<date::local_days> ics_day(std::string_view value) {
  if (value.size() != 8 && !((value.size() == 15 || value.size() == 16) && to_upper(value[8]) == 'T')) return {};
  if (!std::ranges::all_of(value.substr(0, 8), is_digit)) return {};
  return day_of(value.substr(0, 4), value.substr(4, 2), value.substr(6, 2));
}

// DURATION's value for an all-day event: [+]PnD or [+]PnW, as days.
std::optional<int> ics_days(std::string_view value) {
  if (value.starts_with('+')) value.remove_prefix(1);
  if (value.size() < 3 || to_upper(value.front()) != 'P') return {};
  const char unit = to_upper(value.back());
  const auto digits = value.substr(1, value.size() - 2);
  if ((unit != 'D' && unit != 'W') || digits.size() > 6 || !std::ranges::all_of(digits, is_digit)) return {};
  int count = 0;
  for (char c : digits) count = count * 10 + (c - '0');
  return unit == 'W' ? count * 7 : count;
}

struct Event {
  std::optional<date::local_days> day;
  bool all_day = false;                   // DTSTART is a date, not a date-time
  std::optional<date::local_days> end;    // DTEND's date: the first day after the event
  std::string duration;                   // DURATION's value
  std::size_t duration_line = 0;
  bool cancelled = false;                 // STATUS:CANCELLED
  std::string name;
  std::size_t line = 0;  // BEGIN:VEVENT's
  int nested = 0;        // components open inside it (an alarm), whose lines are not the event's
};

Result<date::local_days> event_day(const Property& property, std::string_view source, std::size_t line) {
  const auto value = trim(property.value);
  const auto day = ics_day(value);
  if (!day)
    return bad_line(source, line,
                    fmt::format("{} \"{}\" is not a date (20261225) or a date-time (20261225T090000)", property.name,
                                value));
  return *day;
}

// The days an event covers: an all-day event's from DTSTART up to DTEND
// (RFC 5545: the first day after it) or for its DURATION, at least one; a
// timed event's the day it starts on.
Result<int> event_length(const Event& event, std::string_view source) {
  if (!event.all_day) return 1;
  if (event.end) return std::max(1, static_cast<int>((*event.end - *event.day).count()));
  if (event.duration.empty()) return 1;
  const auto days = ics_days(event.duration);
  if (!days)
    return bad_line(source, event.duration_line,
                    fmt::format("DURATION \"{}\" is not days (P3D) or weeks (P1W), as an all-day event's is",
                                event.duration.substr(0, 40)));
  return std::max(1, *days);
}

Result<int> checked_event_length(const Event& event, std::string_view source) {
  const auto length = TRY(event_length(event, source));
  if (*event.day + date::days{length - 1} > date::local_days{date::year{9999} / 12 / 31})
    return bad_line(source, event.line, "the event lasts past the year 9999");
  return length;
}

Result<void> read_event_line(const Property& property, Event& event, std::string_view source, std::size_t line) {
  if (property.name == "DTSTART") {
    if (event.day) return bad_line(source, line, "a second DTSTART in the event");
    event.day = TRY(event_day(property, source, line));
    event.all_day = trim(property.value).size() == 8;
  } else if (property.name == "DTEND") {
    event.end = TRY(event_day(property, source, line));
  } else if (property.name == "DURATION") {
    event.duration = upper(trim(property.value));
    event.duration_line = line;
  } else if (property.name == "STATUS") {
    event.cancelled = upper(trim(property.value)) == "CANCELLED";
  } else if (property.name == "SUMMARY") {
    auto name = checked_name(unescaped(property.value));
    if (!name) return bad_line(source, line, name.error().message);
    event.name = std::move(*name);
  } else if (property.name == "RRULE" || property.name == "RDATE") {
    return bad_line(source, line,
                    fmt::format("{}: an event that repeats is not read (give each day its own event)", property.name));
  }
  return {};
}

}  // namespace

Result<CalendarDate> parse_calendar_date(std::string_view text) {
  const auto line = trim(text);
  const auto day = line.size() >= 10 && (line.size() == 10 || is_blank(line[10])) && line[4] == '-' && line[7] == '-'
                       ? day_of(line.substr(0, 4), line.substr(5, 2), line.substr(8, 2))
                       : std::nullopt;
  if (!day)
    return fail(ErrorKind::bad_input,
                fmt::format("\"{}\" does not start with a day (YYYY-MM-DD, then its name if any)", line.substr(0, 40)));
  auto name = TRY(checked_name(trim(line.substr(10))));
  return CalendarDate{*day, std::move(name)};
}

std::vector<CalendarDate> merged_calendar_dates(std::vector<CalendarDate> dates) { return merged(std::move(dates)); }

Result<std::vector<CalendarDate>> parse_calendar_dates(std::string_view text, std::string_view source) {
  std::vector<CalendarDate> dates;
  TRY(for_each_line(text, [&](std::string_view raw, std::size_t number) -> Result<void> {
    const auto line = trim(raw);
    if (line.empty() || line.front() == '#') return {};
    auto date = parse_calendar_date(line);
    if (!date) return bad_line(source, number, date.error().message);
    dates.push_back(std::move(*date));
    return check_count(dates.size(), source, number);
  }));
  return merged(std::move(dates));
}

Result<std::vector<CalendarDate>> parse_calendar_ics(std::string_view text, std::string_view source) {
  std::vector<CalendarDate> dates;
  std::optional<Event> event;
  bool calendar = false;
  for (const auto& line : unfolded(text)) {
    if (trim(line.text).empty()) continue;
    auto property = parse_property(line.text);
    const auto value = property ? upper(trim(property->value)) : std::string();
    if (!calendar && !(property && property->name == "BEGIN" && value == "VCALENDAR"))
      return fail(ErrorKind::bad_input,
                  fmt::format("{}: not an iCalendar file (it does not start with BEGIN:VCALENDAR)", source));
    if (!property) return bad_line(source, line.number, "not an iCalendar line (NAME:VALUE)");
    calendar = true;
    if (property->name == "BEGIN" && value == "VEVENT") {
      if (event) return bad_line(source, line.number, "BEGIN:VEVENT inside an event");
      event = Event{.line = line.number};
    } else if (property->name == "END" && value == "VEVENT") {
      if (!event) return bad_line(source, line.number, "END:VEVENT outside an event");
      if (!event->day) return bad_line(source, event->line, "an event without DTSTART");
      const auto length = TRY(checked_event_length(*event, source));
      if (!event->cancelled) {
        TRY(check_count(dates.size() + static_cast<std::size_t>(length), source, line.number));
        for (int i = 0; i < length; ++i) dates.push_back({*event->day + date::days{i}, event->name});
      }
      event.reset();
    } else if (event && (property->name == "BEGIN" || property->name == "END")) {
      event->nested += property->name == "BEGIN" ? 1 : -1;
    } else if (event && event->nested == 0) {
      TRY(read_event_line(*property, *event, source, line.number));
    }
  }
  if (!calendar) return fail(ErrorKind::bad_input, fmt::format("{}: empty, not an iCalendar file", source));
  if (event) return bad_line(source, event->line, "an event without END:VEVENT");
  return merged(std::move(dates));
}

std::string calendar_date_line(const CalendarDate& date) {
  auto line = date::format("%F", date.day);
  if (!date.name.empty()) line += ' ' + date.name;
  return line;
}

std::string calendar_dates_text(const std::vector<CalendarDate>& dates) {
  std::string text;
  for (const auto& date : dates) text += calendar_date_line(date) + '\n';
  return text;
}

std::string skipped_date_words(const CalendarDate& date, std::string_view calendar) {
  auto day = date::format("%F", date.day);
  if (date.name.empty()) return fmt::format("{} is a day of {}", day, calendar);
  return fmt::format("{} is {} in {}", day, date.name, calendar);
}

std::string skipped_day_words(date::local_days day, const std::vector<NamedCalendar>& calendars) {
  std::string names;
  for (const auto& calendar : calendars) {
    auto found = std::ranges::lower_bound(calendar.dates, day, {}, &CalendarDate::day);
    if (found != calendar.dates.end() && found->day == day) return skipped_date_words(*found, calendar.name);
    names += (names.empty() ? "" : ", ") + calendar.name;
  }
  return fmt::format("{} is a day of {}", date::format("%F", day), names);
}

}  // namespace taskd::core
