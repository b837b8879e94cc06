#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <set>

#include "ops/chains.hpp"
#include "cli/context.hpp"
#include "cli/format.hpp"
#include "cli/json.hpp"
#include "cli/task_file.hpp"
#include "cli/task_file_diff.hpp"
#include "core/policy.hpp"
#include "core/text.hpp"
#include "store/groups.hpp"
#include "store/tasks.hpp"

namespace taskd::cli {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

struct ApplyOptions {
  std::string file;
  bool prune = false;
  bool dry_run = false;
};

enum class Step { add, change, remove };

struct TaskStep {
  Step kind;
  core::TaskDefinition definition;     // add, change: the file's; remove: the removed task's
  std::optional<core::Task> existing;  // change, remove
  std::vector<std::string> fields;     // change: the fields that differ
  bool start_now = false;              // add
  std::optional<core::Schedule> schedule;  // add, change: the definition's
};

struct GroupStep {
  std::string name;
  int concurrency = 0;
  std::optional<int> was;  // none: no cap before
};

struct Plan {
  std::vector<TaskStep> tasks;
  std::vector<GroupStep> groups;
  int unchanged = 0;
};

// Without a dtstart, an rrule's DTSTART is "today": the one the task got when
// it was added stays, or applying the same file tomorrow would change it.
FileTask keeping_dtstart(FileTask task, const std::optional<core::Task>& existing) {
  bool implied = !task.keys.contains("dtstart") && !task.options.schedule.rrule.empty();
  if (implied && existing && existing->definition.dtstart)
    task.options.schedule.dtstart = core::format_local(*existing->definition.dtstart);
  return task;
}

Result<std::optional<TaskStep>> plan_task(store::Database& db, const FileTask& file_task, core::Time now) {
  auto existing = TRY(store::find_task(db, file_task.options.name));
  auto built = TRY(build_file_task(keeping_dtstart(file_task, existing), now));
  auto& definition = built.definition;
  if (existing && existing->definition == definition) return std::nullopt;
  auto schedule = std::move(built.schedule).value();
  if (!existing) return TaskStep{Step::add, definition, std::nullopt, {}, file_task.start_now, schedule};
  auto fields = changed_fields(existing->definition, definition);
  return TaskStep{Step::change, definition, existing, fields, false, schedule};
}

// The file's owner's tasks that the file no longer lists.
Result<void> plan_prune(store::Database& db, const TaskFile& file, Plan& plan) {
  std::set<std::string> listed;
  for (const auto& task : file.tasks) listed.insert(task.options.name);
  auto owned = TRY(store::list_tasks(db, {.owner = file.owner}));
  for (const auto& stored : owned) {
    const auto& task = store::readable(stored);  // a malformed row goes too
    if (!listed.contains(task.definition.name)) plan.tasks.push_back({Step::remove, task.definition, task, {}});
  }
  return {};
}

Result<void> plan_groups(store::Database& db, const TaskFile& file, Plan& plan) {
  auto groups = TRY(store::list_groups(db));
  std::map<std::string, std::optional<int>> caps;
  for (const auto& group : groups) caps[group.name] = group.concurrency;
  for (const auto& [name, cap] : file.group_caps) {
    auto was = caps.contains(name) ? caps[name] : std::nullopt;
    if (was != cap) plan.groups.push_back({name, cap, was});
  }
  return {};
}

Result<Plan> plan_file(store::Database& db, const TaskFile& file, bool prune, core::Time now) {
  Plan plan;
  for (const auto& file_task : file.tasks) {
    auto step = TRY(plan_task(db, file_task, now));
    if (step) {
      plan.tasks.push_back(std::move(*step));
    } else {
      ++plan.unchanged;
    }
  }
  if (prune) {
    TRY(plan_prune(db, file, plan));
  }
  TRY(plan_groups(db, file, plan));
  return plan;
}

// The plan's chains (--after) checked: a task of the file may be after
// another of the file.
Result<void> check_plan_chains(store::Database& db, const Plan& plan) {
  ops::TaskChange change;
  for (const auto& step : plan.tasks) {
    if (step.kind == Step::remove) {
      change.removed.insert(step.definition.name);
    } else {
      change.written.push_back(&step.definition);
    }
  }
  return ops::check_chains(db, change, "after", "apply --prune");
}

Result<void> carry_out(store::Database& db, const TaskStep& step, core::Time now) {
  switch (step.kind) {
    case Step::add: {
      TRY(store::insert_task(db, step.definition, core::on_create(step.schedule.value(), now, step.start_now), now));
      return {};
    }
    case Step::change: {
      TRY(save_definition(db, *step.existing, step.definition, step.schedule.value(), now));
      return {};
    }
    case Step::remove: {
      TRY(store::remove_task(db, step.existing->id));
      return {};
    }
  }
  return {};
}

Result<void> carry_out(store::Database& db, const Plan& plan, core::Time now) {
  for (const auto& step : plan.tasks) {
    TRY(carry_out(db, step, now));
  }
  for (const auto& group : plan.groups) {
    TRY(store::set_group_concurrency(db, group.name, group.concurrency, now));
  }
  return {};
}

// Checks every task before the database is opened, so a bad file creates
// nothing; then plans and (unless a dry run) carries out in one transaction.
Result<Plan> apply_file(const Context& context, const ApplyOptions& options, const TaskFile& file) {
  // An empty owner would select every task in the database.
  if (options.prune && file.owner.empty())
    return fail(ErrorKind::bad_input,
                fmt::format("{}: --prune needs an owner, and [defaults] owner is empty", options.file));
  for (const auto& task : file.tasks) {
    TRY(build_file_task(task, context.clock.now()));
  }
  auto db = TRY(context.open_db(options.dry_run ? store::IfMissing::use_empty : store::IfMissing::create));
  return store::write(db, [&]() -> Result<Plan> {
    // Planned from when the write lock is held, not from before the checks:
    // fewer first slots of a large file fall due before it is committed.
    core::Time now = context.clock.now();
    auto plan = TRY(plan_file(db, file, options.prune, now));
    TRY(check_plan_chains(db, plan));
    if (options.dry_run) return plan;
    TRY(carry_out(db, plan, now));
    return plan;
  });
}

struct StepNames {
  std::string_view symbol;  // in the printed plan
  std::string_view action;  // in --json
};

StepNames names_of(Step step) {
  switch (step) {
    case Step::add:
      return {"+", "add"};
    case Step::change:
      return {"~", "change"};
    case Step::remove:
      return {"-", "remove"};
  }
  return {"?", "?"};
}

int count(const Plan& plan, Step kind) {
  return static_cast<int>(std::ranges::count(plan.tasks, kind, &TaskStep::kind));
}

void print_plan(const Plan& plan, const ApplyOptions& options) {
  for (const auto& step : plan.tasks) {
    std::string fields = step.fields.empty() ? "" : fmt::format(": {}", fmt::join(step.fields, ", "));
    fmt::print("{} {}{}\n", names_of(step.kind).symbol, core::printable(step.definition.name), fields);
  }
  for (const auto& group : plan.groups) {
    fmt::print("{} group {}: concurrency {} (was {})\n", group.was ? "~" : "+", core::printable(group.name), group.concurrency,
               cap_text(group.was));
  }
  fmt::print("{}: {} added, {} changed, {} removed, {} unchanged{}\n", core::printable(options.file),
             count(plan, Step::add), count(plan, Step::change), count(plan, Step::remove), plan.unchanged,
             options.dry_run ? " (dry run: nothing written)" : "");
}

Json plan_json(const Plan& plan, const ApplyOptions& options) {
  Json tasks = Json::array();
  for (const auto& step : plan.tasks) {
    tasks.push_back({{"action", names_of(step.kind).action}, {"name", step.definition.name}, {"fields", step.fields}});
  }
  Json groups = Json::array();
  for (const auto& group : plan.groups) {
    groups.push_back({{"name", group.name},
                      {"concurrency", group.concurrency},
                      {"was", group.was ? Json(*group.was) : Json(nullptr)}});
  }
  return {{"file", options.file},
          {"dry_run", options.dry_run},
          {"tasks", tasks},
          {"groups", groups},
          {"unchanged", plan.unchanged}};
}

Result<void> apply(const Context& context, const ApplyOptions& options) {
  auto file = TRY(read_task_file(options.file));
  auto plan = TRY(apply_file(context, options, file));
  for (const auto& step : plan.tasks) {
    if (step.kind != Step::remove) warn_if_limits_unavailable(step.definition);
  }
  if (context.json) {
    print_json(plan_json(plan, options));
  } else {
    print_plan(plan, options);
  }
  return {};
}

}  // namespace

void add_apply_command(CLI::App& app, Context& context, Action& action) {
  auto options = std::make_shared<ApplyOptions>();
  auto* command = app.add_subcommand("apply", "Make the tasks of a TOML task file (taskd.toml(5)) exist as written");
  command->add_option("file", options->file, "The task file")->required();
  command->add_flag("--prune", options->prune, "Remove the tasks of this file's owner that the file no longer lists");
  command->add_flag("--dry-run", options->dry_run, "Print what would change and write nothing");
  command->callback(
      [&context, &action, options] { action = [&context, options] { return apply(context, *options); }; });
}

}  // namespace taskd::cli
