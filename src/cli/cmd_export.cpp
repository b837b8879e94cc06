#include <fmt/format.h>

#include <memory>
#include <set>

#include "cli/context.hpp"
#include "cli/task_file.hpp"
#include "store/groups.hpp"
#include "store/tasks.hpp"

namespace taskd::cli {
namespace {

using core::Result;

// The caps of the groups the tasks use; every cap when all tasks are exported.
Result<std::map<std::string, int>> group_caps(store::Database& db, const std::vector<core::TaskDefinition>& tasks,
                                              bool every_group) {
  auto groups = store::list_groups(db);
  if (!groups) return std::unexpected(groups.error());
  std::set<std::string> used;
  for (const auto& task : tasks) used.insert(task.group);
  std::map<std::string, int> caps;
  for (const auto& group : *groups) {
    if (group.concurrency && (every_group || used.contains(group.name))) caps.emplace(group.name, *group.concurrency);
  }
  return caps;
}

Result<void> export_tasks(const Context& context, const std::string& owner) {
  auto db = context.open_db(store::IfMissing::use_empty);
  if (!db) return std::unexpected(db.error());
  auto tasks = store::list_tasks(*db, {.group = "", .owner = owner});
  if (!tasks) return std::unexpected(tasks.error());
  std::vector<core::TaskDefinition> definitions;
  for (auto& task : *tasks) definitions.push_back(std::move(task.definition));
  auto caps = group_caps(*db, definitions, owner.empty());
  if (!caps) return std::unexpected(caps.error());
  fmt::print("{}", write_task_file(definitions, *caps));
  return {};
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
