#include "ops/calendars.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/task.hpp"
#include "core/text.hpp"
#include "ops/define.hpp"

namespace taskd::ops {
namespace {

core::Result<std::string> calendar_name(std::string_view verb, std::string_view name) {
  auto valid = core::validate_calendar_name(name);
  if (!valid)
    return core::fail(core::ErrorKind::bad_input, fmt::format("calendar {}: {}", verb, valid.error().message));
  return valid;
}

bool names_calendar(const core::TaskDefinition& definition, std::string_view name) {
  return definition.only_calendar == name ||
         std::ranges::find(definition.skip_calendar, name) != definition.skip_calendar.end();
}

// The names of the tasks whose fields name the calendar.
core::Result<std::vector<std::string>> tasks_using(store::Database& db, std::string_view name) {
  std::vector<std::string> names;
  for (const auto& stored : TRY(store::tasks_naming_calendar(db, name))) {
    const auto& definition = store::readable(stored).definition;
    if (names_calendar(definition, name)) names.push_back(definition.name);
  }
  return names;
}

core::Result<std::optional<std::vector<core::CalendarDate>>> calendar_named(
    store::Database& db, std::string_view name, const std::vector<NewCalendar>& pending) {
  auto given = std::ranges::find(pending, name, &NewCalendar::name);
  if (given != pending.end()) return given->dates;
  return store::read_calendar(db, name);
}

core::Result<std::vector<date::local_days>> days_of(store::Database& db, std::string_view task, std::string_view flag,
                                                    std::string_view name, const std::vector<NewCalendar>& pending) {
  auto dates = TRY(calendar_named(db, name, pending));
  if (!dates)
    return core::fail(
        core::ErrorKind::bad_input,
        fmt::format("{}: {} {}: no calendar named \"{}\" (see taskd calendar list)", task, flag, name, name));
  std::vector<date::local_days> days;
  days.reserve(dates->size());
  for (const auto& date : *dates) days.push_back(date.day);
  return days;
}

// The tasks that use the calendar, their days read anew and their next
// slots planned again where those changed.
core::Result<void> replan_users(store::Database& db, std::string_view name, const std::vector<std::string>& written,
                                core::Time now) {
  for (const auto& stored : TRY(store::tasks_naming_calendar(db, name))) {
    if (!stored || !names_calendar(stored->definition, name)) continue;
    if (std::ranges::find(written, stored->definition.name) != written.end()) continue;
    auto task = *stored;
    TRY(read_task_calendars(db, task));
    if (task.definition == stored->definition) continue;
    TRY(save_definition(db, *stored, task.definition, task.schedule.value(), now));
  }
  return {};
}

}  // namespace

core::Result<void> read_task_calendars(store::Database& db, core::Task& task,
                                       const std::vector<NewCalendar>& pending) {
  auto& definition = task.definition;
  core::CalendarDays days;
  for (const auto& name : definition.skip_calendar) {
    auto more = TRY(days_of(db, definition.name, "--skip-calendar", name, pending));
    days.skipped.insert(days.skipped.end(), more.begin(), more.end());
  }
  std::ranges::sort(days.skipped);
  days.skipped.erase(std::ranges::unique(days.skipped).begin(), days.skipped.end());
  if (!definition.only_calendar.empty())
    days.kept = TRY(days_of(db, definition.name, "--only-calendar", definition.only_calendar, pending));
  if (days == definition.calendar_days && task.schedule) return {};
  definition.calendar_days = std::move(days);
  task.schedule = TRY(core::schedule_of(definition));
  return {};
}

core::Result<std::vector<core::NamedCalendar>> skip_calendars(store::Database& db,
                                                              const core::TaskDefinition& definition) {
  return store::read_calendars(db, definition.skip_calendar);
}

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
  return store::write(db, [&]() -> core::Result<void> {
    TRY(store::write_calendar(db, calendar.name, calendar.dates, if_exists, now));
    return replan_users(db, calendar.name, {}, now);
  });
}

core::Result<void> write_calendars(store::Database& db, const std::vector<NewCalendar>& calendars,
                                   const std::vector<std::string>& written, core::Time now) {
  for (const auto& calendar : calendars) {
    TRY(store::write_calendar(db, calendar.name, calendar.dates, store::IfCalendarExists::replace, now));
    TRY(replan_users(db, calendar.name, written, now));
  }
  return {};
}

core::Result<std::vector<NewCalendar>> calendars_named(store::Database& db, const std::set<std::string>& names) {
  std::vector<NewCalendar> calendars;
  for (const auto& name : names) {
    auto dates = TRY(store::read_calendar(db, name));
    if (!dates)
      return core::fail(core::ErrorKind::bad_input,
                        fmt::format("no calendar named \"{}\", which a task uses", core::printable(name)));
    calendars.push_back({name, std::move(*dates)});
  }
  return calendars;
}

core::Result<std::vector<store::CalendarSummary>> list_calendars(store::Database& db) {
  auto calendars = TRY(store::list_calendars(db));
  for (auto& calendar : calendars) calendar.tasks = TRY(tasks_using(db, calendar.name));
  return calendars;
}

Json calendar_json(const store::CalendarSummary& calendar) {
  Json out;
  out["name"] = calendar.name;
  out["days"] = calendar.days;
  out["first_day"] = calendar.first_day.empty() ? Json(nullptr) : Json(calendar.first_day);
  out["last_day"] = calendar.last_day.empty() ? Json(nullptr) : Json(calendar.last_day);
  out["tasks"] = calendar.tasks;
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
  return store::write(db, [&]() -> core::Result<void> {
    auto users = TRY(tasks_using(db, name));
    if (!users.empty())
      return core::fail(core::ErrorKind::bad_input,
                        fmt::format("calendar rm: \"{}\" is in use by {} (--skip-calendar or --only-calendar); "
                                    "change them first",
                                    name, fmt::join(users, ", ")));
    return store::remove_calendar(db, name);
  });
}

}  // namespace taskd::ops
