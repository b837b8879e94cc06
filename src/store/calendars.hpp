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

// The tasks whose --skip-calendar or --only-calendar may name the calendar
// (a name with _ matches more: read each task's fields), by name.
core::Result<std::vector<StoredTask>> tasks_naming_calendar(Database& db, std::string_view name);

}  // namespace taskd::store
