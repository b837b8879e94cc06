#include "ops/define.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/defaults.hpp"
#include "core/policy.hpp"
#include "exec/process_identity.hpp"
#include "ops/calendars.hpp"
#include "ops/chains.hpp"
#include "ops/tasks.hpp"
#include "ops/task_diff.hpp"
#include "sched/outcome.hpp"
#include "store/defaults.hpp"
#include "store/groups.hpp"
#include "store/workers.hpp"

namespace taskd::ops {
namespace {

using core::Result;

bool same_schedule(const core::TaskDefinition& a, const core::TaskDefinition& b) {
  return a.schedule_kind == b.schedule_kind && a.schedule_spec == b.schedule_spec && a.tz == b.tz &&
         a.dtstart == b.dtstart && a.after_finish == b.after_finish && a.phase == b.phase && a.dst == b.dst &&
         a.rdate == b.rdate && a.exdate == b.exdate && a.calendar_days == b.calendar_days;
}

// --user is a privilege: whoever can write the database has root run
// commands as any user. Refused on a database file that others could write.
Result<void> check_user_grantable(const store::Database& db, const core::TaskDefinition& definition) {
  if (definition.user.empty()) return {};
  auto grantable = store::check_private_database_file(db);
  if (!grantable)
    return core::fail(core::ErrorKind::bad_input,
                      fmt::format("{}: --user {} is refused: only a database file that no one else can write may say "
                                  "whom tasks run as, and {}",
                                  definition.name, definition.user, grantable.error().message));
  return {};
}

// --cron @reboot on a shared database needs --on-host: each host has its own boots.
Result<void> check_boot_host(const store::Database& db, const core::TaskDefinition& definition) {
  if (!core::runs_at_boot(definition) || !definition.on_host.empty() || db.file()) return {};
  return core::fail(core::ErrorKind::bad_input,
                    fmt::format("{}: --cron @reboot on a shared database needs --on-host: each host has its own boots, "
                                "and the task runs after those of the host it names",
                                definition.name));
}

// The checks of a definition about to be written, in a dry run too.
Result<void> check_definition(const store::Database& db, const core::TaskDefinition& definition) {
  TRY(check_user_grantable(db, definition));
  return check_boot_host(db, definition);
}

// The boot a task of @reboot is added under, so that it runs from the next
// boot on (as cron runs an @reboot line added after the boot at the next):
// this machine's where its runs are this machine's (a database file, or on
// a server --on-host this machine's name); else '', which its host's first
// tick replaces with its boot.
std::string boot_added_under(const store::Database& db, const core::TaskDefinition& definition) {
  if (db.file() || definition.on_host == exec::host_name()) return exec::boot_id();
  return {};
}

// A task written with `definition`, before it `before` (none: added): one
// that becomes @reboot, or moves to another host, is under that host's boot.
Result<void> note_boot(store::Database& db, std::int64_t task_id, const core::TaskDefinition& definition,
                       const core::TaskDefinition* before) {
  if (!core::runs_at_boot(definition)) return {};
  if (before && core::runs_at_boot(*before) && before->on_host == definition.on_host) return {};
  return store::set_task_boot(db, task_id, boot_added_under(db, definition));
}

// The values of the fields the task takes from the database's defaults.
Result<void> inherit_defaults(store::Database& db, core::Task& task, core::Time now) {
  if (task.definition.from_defaults.empty()) return {};
  return core::take_defaults(task, TRY(store::read_defaults(db)), now);
}

// `defaults`: the database's, read once for the whole file.
Result<std::optional<TaskStep>> plan_task(store::Database& db, const DesiredTask& desired,
                                          const core::Defaults& defaults, const std::vector<NewCalendar>& calendars,
                                          core::Time now) {
  auto existing = TRY(store::find_task(db, desired.name));
  auto built = TRY(desired.build(existing, now));
  TRY(core::take_defaults(built, defaults, now));
  TRY(read_task_calendars(db, built, calendars));
  auto& definition = built.definition;
  if (existing && existing->definition == definition) return std::nullopt;
  auto schedule = std::move(built.schedule).value();
  if (!existing) return TaskStep{Step::add, definition, std::nullopt, {}, desired.start_now, schedule};
  auto fields = changed_fields(existing->definition, definition);
  return TaskStep{Step::change, definition, existing, fields, false, schedule};
}

// The owner's tasks that the file no longer lists.
Result<void> plan_prune(store::Database& db, const ApplyArgs& args, Plan& plan) {
  std::set<std::string> listed;
  for (const auto& task : args.tasks) listed.insert(task.name);
  auto owned = TRY(store::list_tasks(db, {.owner = args.owner}));
  for (const auto& stored : owned) {
    const auto& task = store::readable(stored);  // a malformed row goes too
    if (!listed.contains(task.definition.name)) plan.tasks.push_back({Step::remove, task.definition, task, {}});
  }
  return {};
}

Result<void> plan_groups(store::Database& db, const ApplyArgs& args, Plan& plan) {
  auto groups = TRY(store::list_groups(db));
  std::map<std::string, std::optional<int>> caps;
  for (const auto& group : groups) caps[group.name] = group.concurrency;
  for (const auto& [name, cap] : args.group_caps) {
    auto was = caps.contains(name) ? caps[name] : std::nullopt;
    if (was != cap) plan.groups.push_back({name, cap, was});
  }
  return {};
}

Result<void> plan_calendars(store::Database& db, const ApplyArgs& args, Plan& plan) {
  for (const auto& calendar : args.calendars) {
    auto stored = TRY(store::read_calendar(db, calendar.name));
    if (!stored) plan.calendars.push_back({Step::add, calendar, std::nullopt});
    else if (*stored != calendar.dates) plan.calendars.push_back({Step::change, calendar, stored->size()});
  }
  return {};
}

Result<Plan> plan_file(store::Database& db, const ApplyArgs& args, core::Time now) {
  Plan plan;
  TRY(plan_calendars(db, args, plan));
  auto defaults = TRY(store::read_defaults(db));
  for (const auto& desired : args.tasks) {
    auto step = TRY(plan_task(db, desired, defaults, args.calendars, now));
    if (step) {
      plan.tasks.push_back(std::move(*step));
    } else {
      ++plan.unchanged;
    }
  }
  if (args.prune) {
    TRY(plan_prune(db, args, plan));
  }
  TRY(plan_groups(db, args, plan));
  return plan;
}

// The plan's chains (--after) checked: a task of the file may be after
// another of the file.
Result<void> check_plan_chains(store::Database& db, const Plan& plan) {
  TaskChange change;
  for (const auto& step : plan.tasks) {
    if (step.kind == Step::remove) {
      change.removed.insert(step.definition.name);
    } else {
      change.written.push_back(&step.definition);
    }
  }
  return check_chains(db, change, "after", "apply --prune");
}

// The plan's definitions (--user, @reboot) checked before anything is
// written, and in a dry run too: it says what apply would do.
Result<void> check_plan_definitions(const store::Database& db, const Plan& plan) {
  for (const auto& step : plan.tasks) {
    if (step.kind != Step::remove) TRY(check_definition(db, step.definition));
  }
  return {};
}

Result<void> carry_out(store::Database& db, const TaskStep& step, core::Time now) {
  switch (step.kind) {
    case Step::add: {
      auto id = TRY(
          store::insert_task(db, step.definition, core::on_create(step.schedule.value(), now, step.start_now), now));
      return note_boot(db, id, step.definition, nullptr);
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

// The file's calendars that changed, before its tasks, which carry their
// new days already; the other tasks that use them are planned anew.
Result<void> carry_out_calendars(store::Database& db, const Plan& plan, core::Time now) {
  std::vector<NewCalendar> calendars;
  for (const auto& step : plan.calendars) calendars.push_back(step.calendar);
  std::vector<std::string> written;
  for (const auto& step : plan.tasks) written.push_back(step.definition.name);
  return write_calendars(db, calendars, written, now);
}

Result<void> carry_out(store::Database& db, const Plan& plan, core::Time now) {
  TRY(carry_out_calendars(db, plan, now));
  for (const auto& step : plan.tasks) {
    TRY(carry_out(db, step, now));
  }
  for (const auto& group : plan.groups) {
    TRY(store::set_group_concurrency(db, group.name, group.concurrency, now));
  }
  return {};
}

}  // namespace

Result<SchedulerUsers> whom_schedulers_run_as(store::Database& db, core::Time now) {
  using namespace std::chrono_literals;
  SchedulerUsers users;
  for (const auto& scheduler : TRY(store::scheduler_users(db, now - 24h))) {
    if (!scheduler.uid) continue;
    users.known = true;
    if (*scheduler.uid != 0) users.not_root.push_back(fmt::format("{} (uid {})", scheduler.host, *scheduler.uid));
  }
  return users;
}

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

Result<core::Task> add_task(store::Database& db, core::Task task, bool start_now, core::Time now) {
  task.id = TRY(store::write(db, [&]() -> Result<std::int64_t> {
    TRY(inherit_defaults(db, task, now));
    TRY(read_task_calendars(db, task));
    task.state = core::on_create(task.schedule.value(), now, start_now);
    TRY(check_chains(db, {.written = {&task.definition}}, "--after", "add"));
    TRY(check_definition(db, task.definition));
    auto id = TRY(store::insert_task(db, task.definition, task.state, now));
    TRY(note_boot(db, id, task.definition, nullptr));
    return id;
  }));
  return task;
}

Result<core::TaskState> save_definition(store::Database& db, const core::Task& task,
                                        const core::TaskDefinition& definition, const core::Schedule& schedule,
                                        core::Time now, Replan replan) {
  bool plan_anew = replan == Replan::always || !same_schedule(definition, task.definition);
  TRY(check_definition(db, definition));
  auto decision = core::on_edit(schedule, task.state, now, plan_anew);
  TRY(store::update_definition(db, task.id, definition, now));
  TRY(note_boot(db, task.id, definition, &task.definition));
  TRY(sched::write_decision(db, task.id, decision.state, decision.skipped, now));
  return decision.state;
}

Result<core::Task> edit_task(store::Database& db, std::string_view name, const Rebuild& rebuild, core::Time now) {
  return store::write(db, [&]() -> Result<core::Task> {
    auto stored = TRY(find_named_stored_task(db, name, "edit"));
    const auto& task = store::readable(stored);
    auto built = TRY(rebuild(stored, now));
    TRY(inherit_defaults(db, built, now));
    TRY(read_task_calendars(db, built));
    const auto& definition = built.definition;
    bool changed = definition != task.definition || !stored;
    if (!changed && !task.state.disabled_until_update) return task;
    if (definition.after != task.definition.after) {
      TRY(check_chains(db, {.written = {&definition}}, "--after", "edit"));
    }
    auto replan = stored ? Replan::when_schedule_changes : Replan::always;
    auto state = TRY(save_definition(db, task, definition, built.schedule.value(), now, replan));
    return core::Task{task.id, definition, state, built.schedule};
  });
}

Result<Plan> apply(store::Database& db, const ApplyArgs& args, const sched::Clock& clock) {
  return store::write(db, [&]() -> Result<Plan> {
    // Planned from when the write lock is held, not from before the checks:
    // fewer first slots of a large file fall due before it is committed.
    core::Time now = clock.now();
    auto plan = TRY(plan_file(db, args, now));
    TRY(check_plan_chains(db, plan));
    TRY(check_plan_definitions(db, plan));
    plan.schedulers = TRY(whom_schedulers_run_as(db, now));
    if (args.dry_run) return plan;
    TRY(carry_out(db, plan, now));
    return plan;
  });
}

std::string counts_text(const Plan& plan) {
  auto count = [&plan](Step kind) { return std::ranges::count(plan.tasks, kind, &TaskStep::kind); };
  return fmt::format("{} added, {} changed, {} removed, {} unchanged", count(Step::add), count(Step::change),
                     count(Step::remove), plan.unchanged);
}

Json plan_json(const Plan& plan, std::string_view file, bool dry_run) {
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
  Json calendars = Json::array();
  for (const auto& step : plan.calendars) {
    calendars.push_back({{"action", names_of(step.kind).action},
                         {"name", step.calendar.name},
                         {"days", step.calendar.dates.size()},
                         {"was", step.was ? Json(*step.was) : Json(nullptr)}});
  }
  return {{"file", file},          {"dry_run", dry_run},   {"tasks", tasks},
          {"groups", groups},      {"calendars", calendars}, {"unchanged", plan.unchanged}};
}

}  // namespace taskd::ops
