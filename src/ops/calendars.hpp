#pragma once
// Calendars (taskd calendar): add, list, show, rm.
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/calendar.hpp"
#include "core/error.hpp"
#include "core/task.hpp"
#include "ops/json.hpp"
#include "store/calendars.hpp"

namespace taskd::ops {

// The calendars of the task's --skip-calendar, each with its days' names.
core::Result<std::vector<core::NamedCalendar>> skip_calendars(store::Database& db,
                                                              const core::TaskDefinition& definition);

enum class CalendarFormat { dates, ics };

struct NewCalendar {
  std::string name;
  std::vector<core::CalendarDate> dates;
};

// The days of the calendars the task names (--skip-calendar,
// --only-calendar) read into its definition, and its schedule made anew; a
// calendar that does not exist is bad input naming the task and the option.
// `pending` (apply's file's, not yet written) take the place of the
// database's calendars of their names.
core::Result<void> read_task_calendars(store::Database& db, core::Task& task,
                                       const std::vector<NewCalendar>& pending = {});

// The calendar `name` (checked) of `text`, from the file `source`, read as
// `format`: read before the database is opened, so that bad input writes nothing.
core::Result<NewCalendar> read_calendar(std::string_view name, CalendarFormat format, std::string_view text,
                                        std::string_view source);
// Writes the calendar, and with --replace reads its days anew into the
// tasks that use it and plans their next slots again, in one transaction.
core::Result<void> add_calendar(store::Database& db, const NewCalendar& calendar, store::IfCalendarExists if_exists,
                                core::Time now);

// Writes the calendars, replacing those of their names, and reads their
// days anew into the tasks that use them but are not `written` (the caller
// writes those with the new days), planning their next slots again. Call
// it inside store::write.
core::Result<void> write_calendars(store::Database& db, const std::vector<NewCalendar>& calendars,
                                   const std::vector<std::string>& written, core::Time now);

// The calendars of these names (export writes those its tasks use); one
// that does not exist is bad input.
core::Result<std::vector<NewCalendar>> calendars_named(store::Database& db, const std::set<std::string>& names);

// Every calendar, with the tasks that use it.
core::Result<std::vector<store::CalendarSummary>> list_calendars(store::Database& db);
Json calendar_json(const store::CalendarSummary& calendar);

// The calendar's days, of `year` alone when given; an error when there is
// no calendar of that name.
core::Result<std::vector<core::CalendarDate>> calendar_days(store::Database& db, std::string_view name,
                                                            std::optional<int> year);
Json calendar_date_json(const core::CalendarDate& date);

// Refused (bad input naming them) while tasks use the calendar.
core::Result<void> remove_calendar(store::Database& db, std::string_view name);

}  // namespace taskd::ops
