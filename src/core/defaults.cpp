#include "core/defaults.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>

#include "core/recent_cache.hpp"
#include "core/task_fields.hpp"
#include "core/text.hpp"
#include "core/zone.hpp"

namespace taskd::core {
namespace {

constexpr std::array<std::string_view, 8> with_defaults{"mail_to", "notify_url", "notify_format", "notify",
                                                         "retry",   "timeout",    "keep_runs",     "tz"};

bool names(const std::vector<std::string>& list, std::string_view field) {
  return std::ranges::find(list, field) != list.end();
}

const TaskField* field_of_table(std::string_view name) {
  auto table = task_fields();
  auto found = std::ranges::find(table, name, &TaskField::name);
  return found == table.end() ? nullptr : &*found;
}

Result<void> set_zone(std::string_view text, TaskDefinition& definition) {
  auto zone = find_zone(text);
  if (!zone) return fail(ErrorKind::bad_input, "--tz: " + zone.error().message);
  definition.tz = zone_name(*zone);
  return {};
}

// Sets a field other than the zone from its option's text.
Result<void> set_field(std::string_view field, std::string_view text, TaskDefinition& definition,
                       const Schedule& schedule, Time now) {
  if (field == "retry") {
    definition.retry = TRY(parse_retry_ladder(text));
    return {};
  }
  return field_of_table(field)->set(text, definition, schedule, now);
}

std::string default_text(std::string_view field, const Defaults& defaults) {
  auto found = defaults.find(field);
  return found == defaults.end() ? built_in_text(field) : found->second;
}

}  // namespace

std::span<const std::string_view> defaultable_fields() { return with_defaults; }

bool is_defaultable(std::string_view field) {
  return std::ranges::find(with_defaults, field) != with_defaults.end();
}

std::string option_of(std::string_view field) {
  std::string option = fmt::format("--{}", field);
  std::ranges::replace(option, '_', '-');
  return option;
}

std::string built_in_text(std::string_view field) {
  if (field == "retry") return retry_ladder_text(default_retry_ladder());
  if (field == "tz") return "";
  return std::string(field_of_table(field)->initial);
}

bool takes_default(std::string_view field, const TaskDefinition& definition) {
  if (field != "tz") return true;
  return definition.schedule_kind == ScheduleKind::cron || definition.schedule_kind == ScheduleKind::rrule;
}

Result<void> check_default(std::string_view field, std::string_view text) {
  if (!is_defaultable(field)) return fail(ErrorKind::usage, fmt::format("{} has no default", field));
  TRY(require_utf8(fmt::format("--{}", field), text));
  TaskDefinition scratch;
  if (field == "tz") return set_zone(text, scratch);
  return set_field(field, text, scratch, Manual{}, Time{});
}

Result<void> take_defaults(Task& task, const Defaults& defaults, Time now) {
  auto& d = task.definition;
  std::vector<std::string> taken;
  for (auto field : with_defaults) {
    if (names(d.from_defaults, field) && takes_default(field, d)) taken.emplace_back(field);
  }
  d.from_defaults = std::move(taken);
  auto why = [&d](const Error& error) {
    return fail(error.kind, fmt::format("task \"{}\" takes a value from the defaults: {}", d.name, error.message));
  };
  auto zone = defaults.find("tz");
  if (names(d.from_defaults, "tz") && zone != defaults.end() && zone->second != d.tz) {
    if (auto set = set_zone(zone->second, d); !set) return why(set.error());
    task.schedule.reset();
  }
  if (!task.schedule) {
    auto schedule = schedule_of(d);
    if (!schedule) return why(schedule.error());
    task.schedule = std::move(*schedule);
  }
  for (const auto& field : d.from_defaults) {
    if (field == "tz") continue;
    if (auto set = set_field(field, default_text(field, defaults), d, *task.schedule, now); !set)
      return why(set.error());
  }
  return {};
}

std::string from_defaults_text(const std::vector<std::string>& list) {
  std::string text;
  for (const auto& field : list) text += (text.empty() ? "" : ",") + field;
  return text;
}

namespace {

Result<std::vector<std::string>> parse_list(std::string_view text) {
  std::vector<std::string> list;
  for (auto& field : list_items(text)) {
    if (!is_defaultable(field))
      return fail(ErrorKind::bad_input, fmt::format("\"{}\" is not a field that has a default", printable(field)));
    list.push_back(std::move(field));
  }
  return list;
}

}  // namespace

// Parsed once for each list met lately: a listing reads the list of every
// row, and most rows share one of a few.
Result<std::vector<std::string>> parse_from_defaults(std::string_view text) {
  if (text.empty()) return std::vector<std::string>{};
  constexpr std::size_t kept_lists = 16;
  static RecentCache<std::string, Result<std::vector<std::string>>> cache(kept_lists);
  auto hash = std::hash<std::string_view>{}(text);
  if (auto kept = cache.find(hash, text)) return *kept;
  auto parsed = parse_list(text);
  cache.insert(hash, std::string(text), std::make_shared<const Result<std::vector<std::string>>>(parsed));
  return parsed;
}

}  // namespace taskd::core
