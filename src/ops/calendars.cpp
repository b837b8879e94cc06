#include "ops/calendars.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/task.hpp"
#include "core/text.hpp"

namespace taskd::ops {
namespace {

core::Result<std::string> calendar_name(std::string_view verb, std::string_view name) {
  auto valid = core::validate_task_name(name);
  if (!valid)
    return core::fail(core::ErrorKind::bad_input, fmt::format("calendar {}: {}", verb, valid.error().message));
  return valid;
}

}  // namespace

core::Result<NewCalendar> read_calendar(std::string_view name, CalendarFormat format, std::string_view text,
                                        std::string_view source) {
  auto valid = TRY(calendar_name("add", name));
  TRY(core::require_utf8(source, text));
  auto dates = TRY(format == CalendarFormat::ics ? core::parse_calendar_ics(text, source)
                                                 : core::parse_calendar_dates(text, source));
  return NewCalendar{std::move(valid), std::move(dates)};
}

core::Result<void> add_calendar(store::Database& db, const NewCalendar& calendar, store::IfCalendarExists if_exists,
                                core::Time now) {
  return store::write_calendar(db, calendar.name, calendar.dates, if_exists, now);
}

core::Result<std::vector<store::CalendarSummary>> list_calendars(store::Database& db) {
  return store::list_calendars(db);
}

Json calendar_json(const store::CalendarSummary& calendar) {
  Json out;
  out["name"] = calendar.name;
  out["days"] = calendar.days;
  out["first_day"] = calendar.first_day.empty() ? Json(nullptr) : Json(calendar.first_day);
  out["last_day"] = calendar.last_day.empty() ? Json(nullptr) : Json(calendar.last_day);
  return out;
}

core::Result<std::vector<core::CalendarDate>> calendar_days(store::Database& db, std::string_view name,
                                                            std::optional<int> year) {
  if (year && (*year < 1 || *year > 9999))
    return core::fail(core::ErrorKind::bad_input,
                      fmt::format("calendar show: --year {} is not a year (1 to 9999)", *year));
  auto dates = TRY(store::read_calendar(db, name));
  if (!dates)
    return core::fail(core::ErrorKind::bad_input,
                      fmt::format("calendar show: no calendar named \"{}\" (see taskd calendar list)", name));
  if (year)
    std::erase_if(*dates, [&](const core::CalendarDate& date) {
      return date::year_month_day{date.day}.year() != date::year{*year};
    });
  return std::move(*dates);
}

Json calendar_date_json(const core::CalendarDate& date) {
  Json out;
  out["date"] = date::format("%F", date.day);
  out["name"] = date.name;
  return out;
}

core::Result<void> remove_calendar(store::Database& db, std::string_view name) {
  return store::remove_calendar(db, name);
}

}  // namespace taskd::ops
