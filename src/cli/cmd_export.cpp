// `taskd export`: the tasks as a task file that `taskd apply` reads back,
// written task by task as the rows are read.
#include <fmt/format.h>

#include <memory>

#include "cli/context.hpp"
#include "cli/task_file.hpp"
#include "core/text.hpp"
#include "store/groups.hpp"
#include "store/tasks.hpp"

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

Result<void> export_tasks(const Context& context, const std::string& owner) {
  auto db = context.open_db(store::IfMissing::use_empty);
  if (!db) return std::unexpected(db.error());
  auto caps = store::group_caps(*db, owner);
  if (!caps) return std::unexpected(caps.error());
  fmt::print("{}", task_file_head(*caps));
  std::string text;
  return store::for_each_task(*db, {.owner = owner}, [&](const core::Task& task) -> Result<void> {
    warn_if_not_utf8(task.definition);
    text.clear();
    write_task(text, task.definition);
    fmt::print("{}", text);
    return {};
  });
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
