#pragma once
// Calendars (taskd calendar): add, list, show, rm.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/calendar.hpp"
#include "core/error.hpp"
#include "ops/json.hpp"
#include "store/calendars.hpp"

namespace taskd::ops {

enum class CalendarFormat { dates, ics };

struct NewCalendar {
  std::string name;
  std::vector<core::CalendarDate> dates;
};

// The calendar `name` (checked) of `text`, from the file `source`, read as
// `format`: read before the database is opened, so that bad input writes nothing.
core::Result<NewCalendar> read_calendar(std::string_view name, CalendarFormat format, std::string_view text,
                                        std::string_view source);
core::Result<void> add_calendar(store::Database& db, const NewCalendar& calendar, store::IfCalendarExists if_exists,
                                core::Time now);

core::Result<std::vector<store::CalendarSummary>> list_calendars(store::Database& db);
Json calendar_json(const store::CalendarSummary& calendar);

// The calendar's days, of `year` alone when given; an error when there is
// no calendar of that name.
core::Result<std::vector<core::CalendarDate>> calendar_days(store::Database& db, std::string_view name,
                                                            std::optional<int> year);
Json calendar_date_json(const core::CalendarDate& date);

core::Result<void> remove_calendar(store::Database& db, std::string_view name);

}  // namespace taskd::ops
