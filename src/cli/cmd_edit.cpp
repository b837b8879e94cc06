#include <fmt/format.h>
#include <memory>
#include <set>

#include "cli/chains.hpp"
#include "cli/context.hpp"
#include "cli/format.hpp"
#include "cli/json.hpp"
#include "cli/task_options.hpp"
#include "store/tasks.hpp"

namespace taskd::cli {
namespace {

using core::Result;

struct EditOptions {
  TaskOptions edits;
  std::set<std::string> given;  // the options on the command line, as CLI11 names them
};

// In one transaction: the new definition, and the state the change implies.
Result<core::Task> edit_task(store::Database& db, const EditOptions& options, core::Time now) {
  return store::write(db, [&]() -> Result<core::Task> {
    auto task = find_named_task(db, options.edits.name, "edit");
    if (!task) return std::unexpected(task.error());
    auto merged = options_of(task->definition);
    overlay_options(merged, options.edits, options.given);
    auto definition = build_definition(merged, now);
    if (!definition) return std::unexpected(definition.error());
    bool changed = *definition != task->definition;
    if (!changed && !task->state.disabled_until_update) return task;
    if (definition->after != task->definition.after) {
      if (auto chained = check_chains(db, {.written = {&*definition}}, "--after", "edit"); !chained)
        return std::unexpected(chained.error());
    }
    auto state = save_definition(db, *task, *definition, now);
    if (!state) return std::unexpected(state.error());
    return core::Task{task->id, *definition, *state};
  });
}

Result<void> edit(const Context& context, const EditOptions& options) {
  auto db = context.open_db(store::IfMissing::use_empty);
  if (!db) return std::unexpected(db.error());
  auto task = edit_task(*db, options, context.clock.now());
  if (!task) return std::unexpected(task.error());
  warn_if_limits_unavailable(task->definition);
  if (context.json) {
    print_json(task_json(*task));
  } else {
    const auto& next = task->state.next_run_at;
    fmt::print("edited {}: {}, next run {}\n", task->definition.name, describe_schedule(task->definition),
               next ? core::format_rfc3339(*next) : "none");
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
  command->callback([command, &context, &action, options] {
    for (const auto* option : command->get_options()) {
      if (option->count() > 0) options->given.insert(option->get_name());
    }
    action = [&context, options] { return edit(context, *options); };
  });
}

}  // namespace taskd::cli
