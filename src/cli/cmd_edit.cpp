#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <memory>
#include <set>

#include "cli/context.hpp"
#include "cli/format.hpp"
#include "cli/json.hpp"
#include "cli/task_options.hpp"
#include "core/defaults.hpp"
#include "core/task_fields.hpp"
#include "core/text.hpp"
#include "ops/define.hpp"

namespace taskd::cli {
namespace {

using core::Result;

struct EditOptions {
  TaskOptions edits;
  std::set<std::string> given;  // the options on the command line, as CLI11 names them
  std::vector<std::string> from_defaults;  // --default FIELD,…: taken from the defaults again
};

// --default's fields, each with a default and not also set by its option.
Result<void> take_from_defaults(TaskOptions& merged, const EditOptions& options) {
  for (const auto& item : options.from_defaults) {
    for (auto field : core::list_items(item)) {
      std::ranges::replace(field, '-', '_');
      if (!core::is_defaultable(field))
        return core::fail(core::ErrorKind::usage,
                          fmt::format("edit --default {}: it has no default (taskd defaults lists those that do)",
                                      core::printable(field)));
      auto option = core::option_of(field);
      if (options.given.contains(option))
        return core::fail(core::ErrorKind::usage,
                          fmt::format("edit: {} and --default {} say two things", option, field));
      if (std::ranges::find(merged.from_defaults, field) == merged.from_defaults.end())
        merged.from_defaults.push_back(field);
    }
  }
  return {};
}

// The edit options that set each column of a task's definition that can
// be malformed and is not a field of core::task_fields() (whose option is
// its flag); a malformed column not listed is one of its state, which the
// edit writes anew.
const std::map<std::string_view, std::vector<std::string_view>>& options_setting() {
  static const std::vector<std::string_view> schedule{"--every", "--cron",  "--rrule", "--manual",
                                                      "--tz",    "--dtstart", "--phase", "--after-finish"};
  static const std::map<std::string_view, std::vector<std::string_view>> options{
      {"command", {"command"}},
      {"shell", {"--shell"}},
      {"schedule_kind", schedule},
      {"schedule_spec", schedule},
      {"tz", schedule},
      {"dtstart", schedule},
      {"after_finish", schedule},
      {"phase", schedule},
      {"jitter", {"--jitter"}},
      {"retry", {"--retry"}},
      {"permanent_exit", {"--permanent-exit"}},
      {"env", {"--env"}},
      {"after_finished", {"--after"}},
  };
  return options;
}

// The edit options that set `column`; none for a column of the task's state.
std::vector<std::string> options_setting_column(std::string_view column) {
  if (const auto* field = core::task_field_of_column(column)) return {field->flag()};
  auto setting = options_setting().find(column);
  if (setting == options_setting().end()) return {};
  return {setting->second.begin(), setting->second.end()};
}

// An edit of a malformed row must set each malformed column of its
// definition, or that column would silently take its default: the columns
// the options given leave as they are, each with the options that set it.
std::vector<std::string> columns_left(const store::MalformedTask& task, const std::set<std::string>& given) {
  std::vector<std::string> left;
  for (const auto& problem : task.problems) {
    auto options = options_setting_column(problem.column);
    if (options.empty()) continue;
    if (std::ranges::none_of(options, [&](auto option) { return given.contains(std::string(option)); }))
      left.push_back(fmt::format("{} ({}) with {}{}", problem.column, problem.what,
                                 options.size() == 1 ? "" : "one of ", fmt::join(options, ", ")));
  }
  return left;
}

// The task the options make of the stored one: of a malformed row only
// when they set every malformed column of its definition.
Result<core::Task> rebuilt(const store::StoredTask& stored, const EditOptions& options, core::Time now) {
  if (!stored) {
    auto left = columns_left(stored.error(), options.given);
    if (!left.empty())
      return core::fail(core::ErrorKind::bad_input,
                        fmt::format("edit: task \"{}\" is malformed in the database: set {} (or remove it with taskd rm)",
                                    options.edits.name, fmt::join(left, "; ")));
  }
  auto merged = options_of(store::readable(stored).definition);
  overlay_options(merged, options.edits, options.given);
  TRY(take_from_defaults(merged, options));
  return build_task(merged, now);
}

Result<void> edit(const Context& context, const EditOptions& options) {
  auto db = TRY(context.open_db(store::IfMissing::use_empty));
  auto rebuild = [&options](const store::StoredTask& stored, core::Time now) { return rebuilt(stored, options, now); };
  auto now = context.clock.now();
  auto task = TRY(ops::edit_task(db, options.edits.name, rebuild, now));
  warn_if_limits_unavailable(task.definition);
  warn_if_cannot_switch_user(task.definition, TRY(ops::whom_schedulers_run_as(db, now)));
  if (context.json) {
    print_json(task_json(task));
  } else {
    fmt::print("edited {}: {}, next run {}\n", task.definition.name, core::describe_schedule(task.definition),
               next_run_words(task, context.time_style(now)));
  }
  return {};
}

}  // namespace

void add_edit_command(CLI::App& app, Context& context, Action& action) {
  auto options = std::make_shared<EditOptions>();
  auto* command = app.add_subcommand(
      "edit", "Change a task's options; the rest, its state and its history stay (a disabled task is enabled)");
  command->add_option("name", options->edits.name, "Task name")->required();
  add_definition_options(*command, options->edits);
  command->add_option("--default", options->from_defaults,
                      "Take these fields from the defaults again: FIELD[,FIELD…], e.g. timeout,retry");
  command->callback([command, &context, &action, options] {
    for (const auto* option : command->get_options()) {
      if (option->count() > 0) options->given.insert(option->get_name());
    }
    action = [&context, options] { return edit(context, *options); };
  });
}

}  // namespace taskd::cli
