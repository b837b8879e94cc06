#pragma once
// Calendars (core/calendar.hpp) as the calendars table keeps them: one row
// a calendar, its days as calendar_dates_text writes them.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/calendar.hpp"
#include "core/time.hpp"
#include "store/database.hpp"
#include "store/task_row.hpp"

namespace taskd::store {

struct CalendarSummary {
  std::string name;
  std::int64_t days = 0;
  std::string first_day;  // YYYY-MM-DD; empty for a calendar without days
  std::string last_day;
  std::vector<std::string> tasks;  // that use it (ops fills them in)
};

enum class IfCalendarExists { refuse, replace };

// Writes the calendar; one of that name is refused (bad input) or replaced.
// Call it, and remove_calendar, inside store::write.
core::Result<void> write_calendar(Database& db, std::string_view name, const std::vector<core::CalendarDate>& dates,
                                  IfCalendarExists if_exists, core::Time now);

// Every calendar, by name.
core::Result<std::vector<CalendarSummary>> list_calendars(Database& db);

// The calendar's days; none when there is no calendar of that name. A row
// that does not read back is an error naming the calendar.
core::Result<std::optional<std::vector<core::CalendarDate>>> read_calendar(Database& db, std::string_view name);

// The calendars of `names` that exist, in that order (a task's --skip-calendar).
core::Result<std::vector<core::NamedCalendar>> read_calendars(Database& db, const std::vector<std::string>& names);

// Removes the calendar; none of that name is bad input.
core::Result<void> remove_calendar(Database& db, std::string_view name);

// The days of tasks' calendars (core::calendar_days_text) live in a table
// of their own, once each, named by their SHA-256 in hex: a task row is
// rewritten at each claim and end of its runs and must not carry 100 kB of
// days each time. A task row holds the name ('' for no days).
std::string calendar_days_digest(std::string_view days);
// Keeps `days` (none for '') and returns the name a task row holds.
core::Result<std::string> save_calendar_days(Database& db, std::string_view days);
// Removes the days no task row names any more.
core::Result<void> forget_unused_calendar_days(Database& db);

// The tasks whose --skip-calendar or --only-calendar may name the calendar
// (a name with _ matches more: read each task's fields), by name.
core::Result<std::vector<StoredTask>> tasks_naming_calendar(Database& db, std::string_view name);

}  // namespace taskd::store
