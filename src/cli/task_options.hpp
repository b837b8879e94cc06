#pragma once
// The options that define a task, as `add` and `edit` take them: text as the
// user typed it, checked and turned into a TaskDefinition in one place.
#include <CLI/CLI.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/schedule_options.hpp"
#include "core/task.hpp"
#include "core/task_fields.hpp"
#include "ops/define.hpp"

namespace taskd::cli {

struct TaskOptions {
  std::string name;
  std::vector<std::string> command;
  ScheduleOptions schedule;
  std::string retry = core::retry_ladder_text(core::default_retry_ladder());
  // The fields (core/defaults.hpp) that no option set: the task takes them from the defaults.
  std::vector<std::string> from_defaults = every_defaultable_field();
  std::string permanent_exit = "78";
  std::vector<std::string> env;
  std::string cwd;
  bool shell = false;
  std::string after;  // --after TASK[:finished]; "": none
  // The text of each field of core::task_fields(), in its order: its initial text unless given.
  std::vector<std::string> field_texts = initial_field_texts();

  std::string& field(const core::TaskField& field);
  const std::string& field(const core::TaskField& field) const;
  // The text of the field of the table with that name.
  std::string& field(std::string_view field_name);
  const std::string& field(std::string_view field_name) const;
  static std::vector<std::string> initial_field_texts();
  static std::vector<std::string> every_defaultable_field();
  // The option (--timeout) or task-file key (timeout) was given: the task sets that field itself.
  void set_by_task(std::string_view option_or_key);
};

// Registers every option of a task definition but its name.
void add_definition_options(CLI::App& command, TaskOptions& options);

// Bad input unless every text of the definition (command, env, schedule,
// cwd, owner, group, notify) is UTF-8; the message names the option.
core::Result<void> require_utf8_text(const core::TaskDefinition& definition);

// Checks the options and builds the task they describe: its definition and
// schedule (its id and state are the caller's to set).
core::Result<core::Task> build_task(const TaskOptions& options, core::Time now);

// Prints one warning line on stderr when a taskd started here could not
// apply the definition's resource limits to its runs. The task is kept all
// the same (a scheduler elsewhere may apply them, root under systemd with
// Delegate=yes): a run started where they cannot be applied fails.
void warn_if_limits_unavailable(const core::TaskDefinition& definition);
// A task with --user whose runs fail unless the scheduler runs as root: a
// warning when one of the database's schedulers is not root, or, when none
// is known, when the one who adds or changes it is not (the scheduler
// usually runs as the same user).
void warn_if_cannot_switch_user(const core::TaskDefinition& definition, const ops::SchedulerUsers& schedulers);

// The schedule's options that describe an existing definition.
ScheduleOptions schedule_options_of(const core::TaskDefinition& definition);
// The options that describe an existing definition (what `add` would need).
TaskOptions options_of(const core::TaskDefinition& definition);

// Copies the options named in `given` (as "--timeout", "command") from
// `edits` onto `base`. A new schedule kind replaces the old schedule with its
// phase, DTSTART and fixed-delay flag; its jitter (and, for --cron and
// --rrule, its zone and DST rules) stay unless given.
void overlay_options(TaskOptions& base, const TaskOptions& edits, const std::set<std::string>& given);

}  // namespace taskd::cli
