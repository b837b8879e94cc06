#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>

#include "cli/context.hpp"
#include "cli/format.hpp"
#include "cli/json.hpp"
#include "cli/task_file.hpp"
#include "core/set_dates.hpp"
#include "core/text.hpp"
#include "ops/define.hpp"

namespace taskd::cli {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

struct ApplyOptions {
  std::string file;
  std::string owner;
  bool prune = false;
  bool dry_run = false;
};

// Without a dtstart, an rrule's DTSTART is "today": the one the task got when
// it was added stays, or applying the same file tomorrow would change it.
// Whether --rrule's text is the iCalendar form with a DTSTART line.
bool has_dtstart_line(const std::string& rrule) {
  if (!core::is_recurrence_set(rrule)) return false;
  auto set = core::parse_recurrence_set(rrule);
  return set && set->dtstart;
}

FileTask keeping_dtstart(FileTask task, const std::optional<core::Task>& existing) {
  const auto& rrule = task.options.schedule.rrule;
  bool implied = !task.keys.contains("dtstart") && !rrule.empty() && !has_dtstart_line(rrule);
  if (implied && existing && existing->definition.dtstart)
    task.options.schedule.dtstart = core::format_local(*existing->definition.dtstart);
  return task;
}

// What apply makes of each task of the file, knowing the task it may change.
ops::DesiredTask desired(const FileTask& file_task) {
  return {.name = file_task.options.name,
          .start_now = file_task.start_now,
          .build = [&file_task](const std::optional<core::Task>& existing, core::Time now) {
            return build_file_task(keeping_dtstart(file_task, existing), now);
          }};
}

ops::ApplyArgs apply_args(const ApplyOptions& options, const TaskFile& file) {
  ops::ApplyArgs args{.owner = file.owner,
                      .group_caps = file.group_caps,
                      .prune = options.prune,
                      .dry_run = options.dry_run};
  for (const auto& task : file.tasks) args.tasks.push_back(desired(task));
  for (const auto& calendar : file.calendars) args.calendars.push_back({calendar.name, calendar.dates});
  return args;
}

// Checks every task before the database is opened, so a bad file creates
// nothing; then plans and (unless a dry run) carries out in one transaction.
Result<ops::Plan> apply_file(const Context& context, const ApplyOptions& options, const TaskFile& file) {
  // An empty owner would select every task in the database.
  if (options.prune && file.owner.empty())
    return fail(ErrorKind::bad_input,
                fmt::format("{}: --prune needs an owner, and the file's owner is empty", options.file));
  for (const auto& task : file.tasks) {
    TRY(build_file_task(task, context.clock.now()));
  }
  auto db = TRY(context.open_db(options.dry_run ? store::IfMissing::use_empty : store::IfMissing::create));
  return ops::apply(db, apply_args(options, file), context.clock);
}

void print_plan(const ops::Plan& plan, const ApplyOptions& options) {
  for (const auto& step : plan.calendars) {
    const auto days = step.calendar.dates.size();
    fmt::print("{} calendar {}: {} day{}{}\n", ops::names_of(step.kind).symbol, core::printable(step.calendar.name),
               days, days == 1 ? "" : "s", step.was ? fmt::format(" (was {})", *step.was) : "");
  }
  for (const auto& step : plan.tasks) {
    std::string fields = step.fields.empty() ? "" : fmt::format(": {}", fmt::join(step.fields, ", "));
    fmt::print("{} {}{}\n", ops::names_of(step.kind).symbol, core::printable(step.definition.name), fields);
  }
  for (const auto& group : plan.groups) {
    fmt::print("{} group {}: concurrency {} (was {})\n", group.was ? "~" : "+", core::printable(group.name), group.concurrency,
               cap_text(group.was));
  }
  fmt::print("{}: {}{}\n", core::printable(options.file), ops::counts_text(plan),
             options.dry_run ? " (dry run: nothing written)" : "");
}

Result<void> apply(const Context& context, const ApplyOptions& options) {
  auto file = TRY(read_task_file(options.file, options.owner));
  auto plan = TRY(apply_file(context, options, file));
  for (const auto& step : plan.tasks) {
    if (step.kind == ops::Step::remove) continue;
    warn_if_limits_unavailable(step.definition);
    warn_if_cannot_switch_user(step.definition, plan.schedulers);
  }
  if (context.json) {
    print_json(ops::plan_json(plan, options.file, options.dry_run));
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
  command->add_option("--owner", options->owner,
                      "The owner of the file's tasks, which --prune prunes (default: the file's owner, else its path)");
  command->add_flag("--prune", options->prune, "Remove the tasks of this file's owner that the file no longer lists");
  command->add_flag("--dry-run", options->dry_run, "Print what would change and write nothing");
  command->callback(
      [&context, &action, options] { action = [&context, options] { return apply(context, *options); }; });
}

}  // namespace taskd::cli
