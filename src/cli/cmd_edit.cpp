#include <fmt/format.h>
#include <memory>
#include <set>

#include "cli/context.hpp"
#include "cli/format.hpp"
#include "cli/json.hpp"
#include "cli/task_options.hpp"
#include "core/policy.hpp"
#include "sched/outcome.hpp"
#include "store/tasks.hpp"

namespace taskd::cli {
namespace {

using core::Result;

struct EditOptions {
  TaskOptions edits;
  std::set<std::string> given;  // the options on the command line, as CLI11 names them
};

bool same_schedule(const core::TaskDefinition& a, const core::TaskDefinition& b) {
  return a.schedule_kind == b.schedule_kind && a.schedule_spec == b.schedule_spec && a.tz == b.tz &&
         a.dtstart == b.dtstart && a.after_finish == b.after_finish && a.phase == b.phase;
}

// In one transaction: the new definition, and the state the change implies.
Result<core::Task> edit_task(store::Database& db, const EditOptions& options, core::Time now) {
  return store::guarded(db, [&]() -> Result<core::Task> {
    store::WriteTransaction tx(db);
    auto task = find_named_task(db, options.edits.name, "edit");
    if (!task) return std::unexpected(task.error());
    auto merged = options_of(task->definition);
    overlay_options(merged, options.edits, options.given);
    auto definition = build_definition(merged, now);
    if (!definition) return std::unexpected(definition.error());
    auto schedule = core::schedule_of(*definition);
    if (!schedule) return std::unexpected(schedule.error());
    bool changed = *definition != task->definition;
    if (!changed && !task->state.disabled_until_update) return task;
    auto decision = core::on_edit(*schedule, task->state, now, !same_schedule(*definition, task->definition));
    if (auto updated = store::update_definition(db, task->id, *definition, now); !updated)
      return std::unexpected(updated.error());
    if (auto saved = sched::write_decision(db, task->id, decision.state, decision.skipped, now); !saved)
      return std::unexpected(saved.error());
    tx.commit();
    return core::Task{task->id, *definition, decision.state};
  });
}

Result<void> edit(const Context& context, const EditOptions& options) {
  auto db = context.open_db(store::IfMissing::use_empty);
  if (!db) return std::unexpected(db.error());
  auto task = edit_task(*db, options, context.clock.now());
  if (!task) return std::unexpected(task.error());
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
