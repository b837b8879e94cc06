#pragma once
// The operations that write definitions of tasks: add, edit, apply and
// import. A front-end turns what it was given (options, a task file, a
// crontab) into definitions; these write them with the state they imply.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/task.hpp"
#include "ops/calendars.hpp"
#include "ops/json.hpp"
#include "sched/clock.hpp"
#include "store/database.hpp"
#include "store/tasks.hpp"

namespace taskd::ops {

// Adds `task` (its definition and schedule; its state is planned here),
// in one transaction, after the checks of its chain. `start_now`: its first
// run at the next tick.
core::Result<core::Task> add_task(store::Database& db, core::Task task, bool start_now, core::Time now);

// Whether a saved definition plans the task's next run from now: when its
// schedule changed, or always (its stored state did not read).
enum class Replan { when_schedule_changes, always };

// Saves `definition`, whose schedule is `schedule`, as `task`'s, with the
// state that the change implies (core::on_edit: a disabled task is enabled;
// a new schedule plans from now), and returns that state. Call it inside
// store::write.
core::Result<core::TaskState> save_definition(store::Database& db, const core::Task& task,
                                              const core::TaskDefinition& definition, const core::Schedule& schedule,
                                              core::Time now, Replan replan = Replan::when_schedule_changes);

// The task an edit makes of the stored one (its definition and schedule),
// or why it cannot: a front-end's options laid over the stored definition.
using Rebuild = std::function<core::Result<core::Task>(const store::StoredTask& stored, core::Time now)>;

// In one transaction: the task called `name` rebuilt, and the state the
// change implies. An edit of a malformed row writes the rebuilt definition
// and plans its state anew from now; an edit that changes nothing enables a
// disabled task, and else writes nothing.
core::Result<core::Task> edit_task(store::Database& db, std::string_view name, const Rebuild& rebuild,
                                   core::Time now);

// Whether the database's schedulers can run tasks as another user (--user):
// those seen (registered, or ticking in the last day) that are not root,
// as "HOST (uid N)"; `known` is false when none seen said whom it runs as.
struct SchedulerUsers {
  bool known = false;
  std::vector<std::string> not_root;
};
core::Result<SchedulerUsers> whom_schedulers_run_as(store::Database& db, core::Time now);

// apply: a task file's tasks made to exist as written.
struct DesiredTask {
  std::string name;
  bool start_now = false;
  // The definition and schedule the file gives, knowing the task it may
  // change (an rrule's implied DTSTART stays the existing task's).
  std::function<core::Result<core::Task>(const std::optional<core::Task>& existing, core::Time now)> build;
};

struct ApplyArgs {
  std::vector<DesiredTask> tasks;
  std::string owner;                     // --prune removes this owner's tasks the file no longer lists
  std::map<std::string, int> group_caps;  // the file's groups' concurrency
  std::vector<NewCalendar> calendars;     // created or replaced before the tasks are written
  bool prune = false;
  bool dry_run = false;  // plan, check, write nothing
};

enum class Step { add, change, remove };

struct StepNames {
  std::string_view symbol;  // in a printed plan
  std::string_view action;  // in the JSON
};
StepNames names_of(Step step);

struct TaskStep {
  Step kind;
  core::TaskDefinition definition;         // add, change: the file's; remove: the removed task's
  std::optional<core::Task> existing;      // change, remove
  std::vector<std::string> fields;         // change: the fields that differ
  bool start_now = false;                  // add
  std::optional<core::Schedule> schedule;  // add, change: the definition's
};

struct GroupStep {
  std::string name;
  int concurrency = 0;
  std::optional<int> was;  // none: no cap before
};

// A calendar of the file that is new (add) or has other days (change).
struct CalendarStep {
  Step kind;
  NewCalendar calendar;
  std::optional<std::size_t> was;  // change: the days it had
};

struct Plan {
  std::vector<TaskStep> tasks;
  std::vector<GroupStep> groups;
  std::vector<CalendarStep> calendars;
  int unchanged = 0;
  SchedulerUsers schedulers;  // whom the database's schedulers run as, for the tasks with --user
};

// Plans from when the write lock is held (the time read from `clock` then)
// and, unless a dry run, carries the plan out in the same transaction.
core::Result<Plan> apply(store::Database& db, const ApplyArgs& args, const sched::Clock& clock);
// "1 added, 2 changed, 0 removed, 5 unchanged".
std::string counts_text(const Plan& plan);
// {"file", "dry_run", "tasks": [{"action", "name", "fields"}], "groups",
// "calendars": [{"action", "name", "days", "was"}], "unchanged"}.
Json plan_json(const Plan& plan, std::string_view file, bool dry_run);

}  // namespace taskd::ops
