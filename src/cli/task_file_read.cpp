#include "cli/task_file.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <limits>
#include <optional>

#include "cli/input_file.hpp"
#include "cli/task_file_keys.hpp"
#include "core/error.hpp"

namespace taskd::cli {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

std::string position(const std::filesystem::path& path, const toml::source_region& source) {
  return fmt::format("{}:{}:{}", path.string(), source.begin.line, source.begin.column);
}

bool is_schedule_key(std::string_view key) {
  return key == "every" || key == "cron" || key == "rrule" || key == "manual";
}

bool has_schedule(const toml::table& table) {
  return std::ranges::any_of(table, [](const auto& entry) { return is_schedule_key(entry.first.str()); });
}

// Sets one key of `task`; `context` ("task \"x\"", "[defaults]") names the table in messages.
Result<void> set_key(const std::filesystem::path& path, const toml::key& key, const toml::node& value, FileTask& task,
                     std::string_view context) {
  auto setter = task_keys().find(key.str());
  if (setter == task_keys().end())
    return fail(ErrorKind::bad_input,
                fmt::format("{}: unknown key \"{}\" in {}", position(path, key.source()), key.str(), context));
  if (auto set = setter->second(value, task); !set)
    return fail(ErrorKind::bad_input,
                fmt::format("{}: {}: {}: {}", position(path, value.source()), context, key.str(), set.error().message));
  task.keys[std::string(key.str())] = position(path, value.source());
  return {};
}

Result<void> check_defaults(const std::filesystem::path& path, const toml::table& defaults) {
  FileTask scratch;
  for (const auto& [key, value] : defaults) {
    if (key.str() == "name")
      return fail(ErrorKind::bad_input, fmt::format("{}: [defaults] cannot give a name: each task has its own",
                                                    position(path, key.source())));
    TRY(set_key(path, key, value, scratch, "[defaults]"));
  }
  return {};
}

// A default applies where the task says nothing, and a default schedule only
// to a task without one.
Result<void> apply_defaults(const std::filesystem::path& path, const toml::table& table, const toml::table& defaults,
                            FileTask& task) {
  for (const auto& [key, value] : defaults) {
    if (table.contains(key.str()) || (is_schedule_key(key.str()) && has_schedule(table))) continue;
    TRY(set_key(path, key, value, task, "[defaults]"));
  }
  return {};
}

struct FileContext {
  std::filesystem::path path;  // as given
  std::string owner;
  const toml::table* defaults = nullptr;
};

// What [defaults] and the file add once a task's own keys are read.
Result<void> complete_task(const FileContext& file, const toml::table& table, FileTask& task) {
  if (file.defaults) TRY(apply_defaults(file.path, table, *file.defaults, task));
  for (const auto& given : task.keys) task.options.set_by_task(given.first);
  if (task.options.command.empty())
    return fail(ErrorKind::bad_input, fmt::format("{}: task \"{}\" has no command (command = [\"PROGRAM\", \"ARG\"])",
                                                  task.where, task.options.name));
  if (!task.keys.contains("owner")) task.options.field("owner") = file.owner;
  if (!task.options.cwd.empty())
    task.options.cwd =
        std::filesystem::absolute(file.path.parent_path() / task.options.cwd).lexically_normal().string();
  return {};
}

Result<FileTask> read_task(const FileContext& file, const toml::node& node) {
  FileTask task;
  task.where = position(file.path, node.source());
  const auto* table = node.as_table();
  if (!table) return fail(ErrorKind::bad_input, task.where + ": expected a [[task]] table");
  auto name = (*table)["name"].value_exact<std::string>();
  if (!name) return fail(ErrorKind::bad_input, task.where + ": a task without a name (name = \"…\")");
  std::string context = fmt::format("task \"{}\"", *name);
  for (const auto& [key, value] : *table) TRY(set_key(file.path, key, value, task, context));
  TRY(complete_task(file, *table, task));
  return task;
}

Result<std::vector<FileTask>> read_tasks(const FileContext& file, const toml::node& node) {
  const auto* array = node.as_array();
  if (!array || !array->is_array_of_tables())
    return fail(ErrorKind::bad_input, position(file.path, node.source()) + ": task: expected [[task]] tables");
  std::vector<FileTask> tasks;
  std::map<std::string, std::string> seen;  // name → where
  for (const auto& element : *array) {
    auto task = TRY(read_task(file, element));
    auto [first, inserted] = seen.emplace(task.options.name, task.where);
    if (!inserted)
      return fail(ErrorKind::bad_input, fmt::format("{}: task \"{}\" is already listed at {}", task.where,
                                                    task.options.name, first->second));
    tasks.push_back(std::move(task));
  }
  return tasks;
}

Result<int> read_group_cap(const std::filesystem::path& path, const toml::key& name, const toml::node& node) {
  const auto* table = node.as_table();
  if (!table) return fail(ErrorKind::bad_input, position(path, node.source()) + ": expected a [group.NAME] table");
  if (auto valid = core::validate_task_name(name.str()); !valid)
    return fail(ErrorKind::bad_input,
                fmt::format("{}: group: {}", position(path, name.source()), valid.error().message));
  for (const auto& [key, value] : *table) {
    if (key.str() != "concurrency")
      return fail(ErrorKind::bad_input, fmt::format("{}: unknown key \"{}\" in [group.{}] (only concurrency)",
                                                    position(path, key.source()), key.str(), name.str()));
  }
  auto cap = (*table)["concurrency"].value_exact<std::int64_t>();
  if (!cap || *cap < 1 || *cap > std::numeric_limits<int>::max())
    return fail(ErrorKind::bad_input, fmt::format("{}: [group.{}] needs concurrency = N, a whole number of at least 1",
                                                  position(path, node.source()), name.str()));
  return static_cast<int>(*cap);
}

Result<std::map<std::string, int>> read_groups(const std::filesystem::path& path, const toml::node& node) {
  const auto* table = node.as_table();
  if (!table)
    return fail(ErrorKind::bad_input, position(path, node.source()) + ": group: expected [group.NAME] tables");
  std::map<std::string, int> caps;
  for (const auto& [name, group] : *table) {
    caps.emplace(name.str(), TRY(read_group_cap(path, name, group)));
  }
  return caps;
}

// dates = ["2026-12-25 Christmas Day", "2026-12-26"]: the lines of a dates
// file (calendar add --dates), one a string.
Result<std::vector<core::CalendarDate>> read_calendar_dates(const std::filesystem::path& path,
                                                            const toml::node& node, std::string_view context) {
  const auto* array = node.as_array();
  if (!array)
    return fail(ErrorKind::bad_input,
                fmt::format("{}: {}: dates: expected an array of \"YYYY-MM-DD [name]\" strings",
                            position(path, node.source()), context));
  if (array->size() > core::max_calendar_dates)
    return fail(ErrorKind::bad_input, fmt::format("{}: {}: dates: more than {} days in a calendar",
                                                  position(path, node.source()), context, core::max_calendar_dates));
  std::vector<core::CalendarDate> dates;
  dates.reserve(array->size());
  for (const auto& element : *array) {
    auto text = element.value_exact<std::string>();
    Result<core::CalendarDate> date = fail(ErrorKind::bad_input, "expected a string \"YYYY-MM-DD [name]\"");
    if (text) date = core::parse_calendar_date(*text);
    if (!date)
      return fail(ErrorKind::bad_input, fmt::format("{}: {}: dates: {}", position(path, element.source()), context,
                                                    date.error().message));
    dates.push_back(std::move(*date));
  }
  return core::merged_calendar_dates(std::move(dates));
}

Result<FileCalendar> read_calendar(const std::filesystem::path& path, const toml::node& node) {
  FileCalendar calendar;
  calendar.where = position(path, node.source());
  const auto* table = node.as_table();
  if (!table) return fail(ErrorKind::bad_input, calendar.where + ": expected a [[calendar]] table");
  auto name = (*table)["name"].value_exact<std::string>();
  if (!name) return fail(ErrorKind::bad_input, calendar.where + ": a calendar without a name (name = \"…\")");
  if (auto valid = core::validate_calendar_name(*name); !valid)
    return fail(ErrorKind::bad_input, fmt::format("{}: calendar: {}", position(path, (*table)["name"].node()->source()),
                                                  valid.error().message));
  calendar.name = *name;
  const auto context = fmt::format("calendar \"{}\"", *name);
  for (const auto& [key, value] : *table) {
    if (key.str() != "name" && key.str() != "dates")
      return fail(ErrorKind::bad_input, fmt::format("{}: unknown key \"{}\" in {} (name, dates)",
                                                    position(path, key.source()), key.str(), context));
  }
  const auto* dates = table->get("dates");
  if (!dates)
    return fail(ErrorKind::bad_input,
                fmt::format("{}: {} has no dates (dates = [\"YYYY-MM-DD name\", …])", calendar.where, context));
  calendar.dates = TRY(read_calendar_dates(path, *dates, context));
  return calendar;
}

Result<std::vector<FileCalendar>> read_calendars(const std::filesystem::path& path, const toml::node& node) {
  const auto* array = node.as_array();
  if (!array || !array->is_array_of_tables())
    return fail(ErrorKind::bad_input, position(path, node.source()) + ": calendar: expected [[calendar]] tables");
  std::vector<FileCalendar> calendars;
  for (const auto& element : *array) {
    auto calendar = TRY(read_calendar(path, element));
    auto first = std::ranges::find(calendars, calendar.name, &FileCalendar::name);
    if (first != calendars.end())
      return fail(ErrorKind::bad_input, fmt::format("{}: calendar \"{}\" is already listed at {}", calendar.where,
                                                    calendar.name, first->where));
    calendars.push_back(std::move(calendar));
  }
  return calendars;
}

Result<void> check_top_level(const std::filesystem::path& path, const toml::table& root) {
  for (const auto& [key, value] : root) {
    if (key.str() != "task" && key.str() != "defaults" && key.str() != "group" && key.str() != "owner" &&
        key.str() != "calendar")
      return fail(ErrorKind::bad_input,
                  fmt::format("{}: unknown key \"{}\" (expected [[task]], [[calendar]], [defaults] or [group.NAME])",
                              position(path, key.source()), key.str()));
  }
  if (const auto& owner = root["owner"]; owner && !owner.is_string())
    return fail(ErrorKind::bad_input, position(path, owner.node()->source()) + ": owner: expected a string");
  if (const auto& defaults = root["defaults"]; defaults && !defaults.is_table())
    return fail(ErrorKind::bad_input,
                position(path, defaults.node()->source()) + ": defaults: expected a [defaults] table");
  return {};
}

Result<toml::table> parse_toml(std::string_view text, const std::filesystem::path& path) {
  try {
    return toml::parse(text, std::string_view(path.string()));
  } catch (const toml::parse_error& e) {
    return fail(ErrorKind::bad_input, fmt::format("{}: {}", position(path, e.source()), e.description()));
  }
}

// The owner a file names, and where: a top-level owner, or [defaults] owner
// (both: the same).
struct NamedOwner {
  std::string name;
  std::string where;
};

Result<std::optional<NamedOwner>> named_owner(const std::filesystem::path& path, const toml::table& root) {
  auto owner_at = [&](const toml::node_view<const toml::node>& node) -> std::optional<NamedOwner> {
    auto name = node.value_exact<std::string>();
    if (!name) return std::nullopt;
    return NamedOwner{*name, position(path, node.node()->source())};
  };
  auto top = owner_at(root["owner"]);
  auto in_defaults = owner_at(root["defaults"]["owner"]);
  if (top && in_defaults && top->name != in_defaults->name)
    return fail(ErrorKind::bad_input, fmt::format("{}: [defaults] owner \"{}\" is not the file's owner \"{}\" ({})",
                                                  in_defaults->where, in_defaults->name, top->name, top->where));
  return top ? top : in_defaults;
}

// apply --owner, else the owner the file names, else the file's path; an
// option that says another owner than the file is a mistake, not a choice.
Result<std::string> file_owner(const std::filesystem::path& path, const toml::table& root, std::string_view option) {
  auto named = TRY(named_owner(path, root));
  if (!option.empty() && named && named->name != option)
    return fail(ErrorKind::bad_input, fmt::format("{}: the file's owner is \"{}\", not \"{}\" as --owner says",
                                                  named->where, named->name, option));
  if (!option.empty()) return std::string(option);
  if (named) return named->name;
  return std::filesystem::absolute(path).lexically_normal().string();
}

}  // namespace

Result<TaskFile> parse_task_file(std::string_view text, const std::filesystem::path& path, std::string_view owner) {
  auto root = TRY(parse_toml(text, path));
  TRY(check_top_level(path, root));
  // Not TRY inside the braces: leaving a statement expression there skips
  // the destructor of the member already made (the path's copy).
  auto file_owner_name = TRY(file_owner(path, root, owner));
  FileContext file{path, std::move(file_owner_name), root["defaults"].as_table()};
  if (file.defaults) TRY(check_defaults(path, *file.defaults));
  TaskFile task_file{file.owner, {}, {}, {}};
  if (const auto* tasks = root.get("task")) task_file.tasks = TRY(read_tasks(file, *tasks));
  if (const auto* groups = root.get("group")) task_file.group_caps = TRY(read_groups(path, *groups));
  if (const auto* calendars = root.get("calendar")) task_file.calendars = TRY(read_calendars(path, *calendars));
  return task_file;
}

Result<TaskFile> read_task_file(const std::filesystem::path& path, std::string_view owner) {
  auto text = TRY(read_input_file(path.string()));
  return parse_task_file(text, path, owner);
}

namespace {

// Where the file set the key that `message` names by its option
// ("--kill-grace: …"), else where the task starts.
std::string where_named(const FileTask& task, std::string_view message) {
  if (!message.starts_with("--")) return task.where;
  std::string key(message.substr(2, message.find_first_of(" :", 2) - 2));
  std::ranges::replace(key, '-', '_');
  auto found = task.keys.find(key);
  return found == task.keys.end() ? task.where : found->second;
}

}  // namespace

Result<core::Task> build_file_task(const FileTask& task, core::Time now) {
  auto built = build_task(task.options, now);
  if (built) return built;
  const auto& error = built.error();
  // What the command line calls a usage error is a bad file here.
  auto kind = error.kind == ErrorKind::usage ? ErrorKind::bad_input : error.kind;
  return fail(kind,
              fmt::format("{}: task \"{}\": {}", where_named(task, error.message), task.options.name, error.message));
}

}  // namespace taskd::cli
