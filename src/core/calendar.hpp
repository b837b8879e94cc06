#pragma once
// Calendars (taskd calendar): named sets of days, each with a name of its
// own ("2026-12-25 Christmas Day"), read from a file of "YYYY-MM-DD [name]"
// lines or from an iCalendar file's events; kept in the database as the
// former's text. Pure.
#include <date/date.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace taskd::core {

struct CalendarDate {
  date::local_days day;
  std::string name;  // may be empty

  bool operator==(const CalendarDate&) const = default;
};

// A calendar of 100 000 days (ten per day for 27 years) is far beyond any
// holiday list; the bound keeps what a file can cost the database and the
// scheduler's memory small. A day's name is one line of at most 200 bytes.
inline constexpr std::size_t max_calendar_dates = 100'000;
inline constexpr std::size_t max_date_name = 200;

// One line "YYYY-MM-DD [name]" (blanks around it ignored); the error names
// neither file nor line.
Result<CalendarDate> parse_calendar_date(std::string_view line);
// Sorted, a day given twice once with its names joined with "; ".
std::vector<CalendarDate> merged_calendar_dates(std::vector<CalendarDate> dates);

// Lines "YYYY-MM-DD [name]"; blank lines and those starting with # are
// skipped. Errors name `source` and the line ("days.txt:3: ..."). The days
// come sorted; a day given twice keeps its names joined with "; ".
Result<std::vector<CalendarDate>> parse_calendar_dates(std::string_view text, std::string_view source);

// An iCalendar file (RFC 5545): each VEVENT gives days, named by its SUMMARY
// (escapes undone; a line break becomes a space). An all-day event (DTSTART
// a date, VALUE=DATE) gives every day up to its DTEND, which is the first
// day after it, or of its DURATION (P3D, P1W), at least its first; a timed
// event the date of its DTSTART as written. STATUS:CANCELLED events give
// none. Folded lines are unfolded; an event that repeats (RRULE, RDATE) is
// refused, since only its own days would be read. Errors name `source` and
// the line; each day of a span counts against max_calendar_dates.
Result<std::vector<CalendarDate>> parse_calendar_ics(std::string_view text, std::string_view source);

// The line parse_calendar_date reads back to `date`.
std::string calendar_date_line(const CalendarDate& date);
// The text parse_calendar_dates reads back to `dates`: one line a day.
std::string calendar_dates_text(const std::vector<CalendarDate>& dates);

// A calendar by name with its days (sorted), as a task's --skip-calendar names it.
struct NamedCalendar {
  std::string name;
  std::vector<CalendarDate> dates;
};

// Why a calendar skips its date: "2026-12-25 is Christmas Day in
// de-holidays", or "2026-12-25 is a day of de-holidays" for a date without a name.
std::string skipped_date_words(const CalendarDate& date, std::string_view calendar);

// Why `calendars` skip `day`, in the words of the first that holds it; the
// day and the calendars' names when none does.
std::string skipped_day_words(date::local_days day, const std::vector<NamedCalendar>& calendars);

}  // namespace taskd::core
