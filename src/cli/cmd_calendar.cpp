#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>

#include "cli/context.hpp"
#include "cli/format.hpp"
#include "cli/input_file.hpp"
#include "cli/json.hpp"
#include "core/text.hpp"
#include "ops/calendars.hpp"

namespace taskd::cli {
namespace {

using core::Result;

struct CalendarOptions {
  std::string name;
  std::string ics;
  std::string dates;
  bool replace = false;
  std::optional<int> year;
};

Result<void> add_calendar(const Context& context, const CalendarOptions& options) {
  const bool ics = !options.ics.empty();
  const auto& path = ics ? options.ics : options.dates;
  auto text = TRY(read_input_file(path));
  auto calendar =
      TRY(ops::read_calendar(options.name, ics ? ops::CalendarFormat::ics : ops::CalendarFormat::dates, text, path));
  auto db = TRY(context.open_db(store::IfMissing::create));
  TRY(ops::add_calendar(db, calendar,
                        options.replace ? store::IfCalendarExists::replace : store::IfCalendarExists::refuse,
                        context.clock.now()));
  const auto days = calendar.dates.size();
  fmt::print("calendar {}: {} day{}\n", calendar.name, days, days == 1 ? "" : "s");
  return {};
}

Result<void> list_calendars(const Context& context) {
  auto db = TRY(context.open_db_to_read());
  auto calendars = TRY(ops::list_calendars(db));
  if (context.json) {
    Json out = Json::array();
    for (const auto& calendar : calendars) out.push_back(ops::calendar_json(calendar));
    print_json(out);
    return {};
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& calendar : calendars) {
    rows.push_back({calendar.name, std::to_string(calendar.days), calendar.first_day.empty() ? "-" : calendar.first_day,
                    calendar.last_day.empty() ? "-" : calendar.last_day,
                    calendar.tasks.empty() ? "-" : fmt::format("{}", fmt::join(calendar.tasks, ","))});
  }
  print_table({"CALENDAR", "DAYS", "FIRST", "LAST", "TASKS"}, rows);
  return {};
}

Result<void> show_calendar(const Context& context, const CalendarOptions& options) {
  auto db = TRY(context.open_db_to_read());
  auto dates = TRY(ops::calendar_days(db, options.name, options.year));
  if (context.json) {
    Json out = Json::array();
    for (const auto& date : dates) out.push_back(ops::calendar_date_json(date));
    print_json(out);
    return {};
  }
  for (const auto& date : dates)
    fmt::print("{}{}{}\n", date::format("%F", date.day), date.name.empty() ? "" : "  ", core::printable(date.name));
  return {};
}

Result<void> remove_calendar(const Context& context, const CalendarOptions& options) {
  auto db = TRY(context.open_db(store::IfMissing::use_empty));
  TRY(ops::remove_calendar(db, options.name));
  fmt::print("calendar {}: removed\n", options.name);
  return {};
}

}  // namespace

void add_calendar_command(CLI::App& app, Context& context, Action& action) {
  auto* calendar = app.add_subcommand("calendar", "Calendars: named sets of days, each with its name (holidays)");
  calendar->require_subcommand(1);
  auto options = std::make_shared<CalendarOptions>();

  auto* add = calendar->add_subcommand("add", "Store a calendar from a file (at most 100000 days)");
  add->add_option("name", options->name, "Calendar name")->required();
  auto* source = add->add_option_group("source", "Where the days come from (one of)");
  source->add_option("--ics", options->ics, "An iCalendar file: each event's DTSTART day, its SUMMARY the name");
  source->add_option("--dates", options->dates, "A file of lines YYYY-MM-DD [name] (# comments)");
  source->require_option(1);
  add->add_flag("--replace", options->replace, "Replace the days of a calendar of that name");
  add->callback(
      [&context, &action, options] { action = [&context, options] { return add_calendar(context, *options); }; });

  auto* list = calendar->add_subcommand("list", "List calendars: how many days, the first and the last");
  list->callback([&context, &action] { action = [&context] { return list_calendars(context); }; });

  auto* show = calendar->add_subcommand("show", "Print a calendar's days and their names");
  show->add_option("name", options->name, "Calendar name")->required();
  show->add_option("--year", options->year, "Only the days of this year");
  show->callback(
      [&context, &action, options] { action = [&context, options] { return show_calendar(context, *options); }; });

  auto* rm = calendar->add_subcommand("rm", "Remove a calendar");
  rm->add_option("name", options->name, "Calendar name")->required();
  rm->callback(
      [&context, &action, options] { action = [&context, options] { return remove_calendar(context, *options); }; });
}

}  // namespace taskd::cli
