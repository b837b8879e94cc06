// `taskd export`: the tasks as a task file that `taskd apply` reads back,
// written task by task as the rows are read.
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <set>

#include "cli/context.hpp"
#include "cli/task_file_write.hpp"
#include "cli/task_options.hpp"
#include "core/text.hpp"
#include "ops/calendars.hpp"
#include "ops/groups.hpp"
#include "ops/tasks.hpp"

namespace taskd::cli {
namespace {

using core::Result;

// A row that another program wrote may hold bytes that are not UTF-8, which
// a task file cannot: the file gets U+FFFD for each, and the user is told.
void warn_if_not_utf8(const core::TaskDefinition& definition) {
  auto text = require_utf8_text(definition);
  if (!text)
    fmt::print(stderr, "taskd: warning: export: task {}: {}; written with U+FFFD in place of each such byte\n",
               core::printable(definition.name), text.error().message);
}

// The owner the file names at its top, which apply gives its tasks and
// --prune prunes: --owner's, else the one owner of every task. Tasks of
// several owners each name their own, and the file names none, so that
// applying it with --prune removes none of theirs.
Result<std::optional<std::string>> file_owner(store::Database& db, const std::string& owner) {
  if (!owner.empty()) return owner;
  auto owners = TRY(ops::task_owners(db));
  if (owners.size() == 1) return owners.front();
  if (owners.size() > 1)
    fmt::print(stderr,
               "taskd: warning: export: the tasks have {} owners, so each task names its own and the file names "
               "none: apply --prune of it removes none of their tasks (export --owner O writes one owner's file)\n",
               owners.size());
  return std::nullopt;
}

// The calendars the tasks use, after them, so that applying the file to
// another database makes them too.
Result<void> write_calendars(store::Database& db, const std::set<std::string>& names) {
  std::string text;
  for (const auto& calendar : TRY(ops::calendars_named(db, names))) write_calendar(text, calendar.name, calendar.dates);
  fmt::print("{}", text);
  return {};
}

// A malformed row cannot be written as the task it was: each is left out
// with a line on stderr, the others are written, and the export ends with
// an error (exit 65), so that a file that lacks a task is never taken for
// the whole (applied with --prune, it would remove that task).
Result<void> export_tasks(const Context& context, const std::string& owner) {
  auto db = TRY(context.open_db_to_read());
  auto caps = TRY(ops::group_caps(db, owner));
  auto named_owner = TRY(file_owner(db, owner));
  fmt::print("{}", task_file_head(named_owner, caps));
  std::string text;
  std::int64_t left_out = 0;
  std::set<std::string> calendars;  // that the tasks use
  auto exported = ops::list_tasks(db, {.owner = owner}, ops::Detail::full, [&](const store::StoredTask& task) -> Result<void> {
    if (!task) {
      ++left_out;
      fmt::print(stderr, "taskd: export: left out {}\n",
                 core::printable(store::malformed_task_error(task.error()).message));
      return {};
    }
    warn_if_not_utf8(task->definition);
    text.clear();
    write_task(text, task->definition, named_owner);
    fmt::print("{}", text);
    calendars.insert(task->definition.skip_calendar.begin(), task->definition.skip_calendar.end());
    if (!task->definition.only_calendar.empty()) calendars.insert(task->definition.only_calendar);
    return {};
  });
  if (exported) exported = write_calendars(db, calendars);
  if (!exported || left_out == 0) return exported;
  return core::fail(core::ErrorKind::bad_input,
                    fmt::format("export: {} malformed task{} left out (see above): the file is not complete", left_out,
                                left_out == 1 ? "" : "s"));
}

}  // namespace

void add_export_command(CLI::App& app, Context& context, Action& action) {
  auto owner = std::make_shared<std::string>();
  auto* command = app.add_subcommand("export", "Print the tasks as a task file that taskd apply reads back");
  command->add_option("--owner", *owner, "Only this owner's tasks (and the caps of their groups)");
  command->callback(
      [&context, &action, owner] { action = [&context, owner] { return export_tasks(context, *owner); }; });
}

}  // namespace taskd::cli
