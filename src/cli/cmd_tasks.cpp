#include <fmt/format.h>
#include <fmt/ranges.h>
#include <memory>
#include <span>

#include "cli/context.hpp"
#include "cli/format.hpp"
#include "cli/json.hpp"
#include "core/policy.hpp"
#include "core/task_fields.hpp"
#include "core/text.hpp"
#include "ops/change.hpp"
#include "ops/tasks.hpp"

namespace taskd::cli {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

// How a command says what it did to each task: a line (fmt formats, given
// the name and, for enable, the reason the task was disabled).
struct Wording {
  std::string_view done;
  std::string_view not_done;
};

constexpr Wording pause_wording{"paused {}", "{} was already paused"};
constexpr Wording resume_wording{"resumed {}", "{} was not paused"};
constexpr Wording enable_wording{"enabled {} (it was disabled: {})", "{} was not disabled"};

// One line per task, names and reasons shown printable; or one JSON array.
void print_outcomes(const std::vector<ops::Outcome>& outcomes, ops::Change change, const Wording& wording, bool json) {
  if (json) {
    print_json(ops::outcomes_json(outcomes, change));
    return;
  }
  for (const auto& outcome : outcomes)
    fmt::print("{}\n", fmt::format(fmt::runtime(outcome.done ? wording.done : wording.not_done),
                                   core::printable(outcome.task), core::printable(outcome.disabled_reason)));
}

std::string last_outcome(const core::TaskState& state) {
  if (!state.last_status) return "-";
  return std::string(core::to_string(*state.last_status));
}

struct ListOptions {
  store::TaskFilter filter;
  std::string state;     // --state: active, paused, disabled or failing
  std::int64_t limit = 0;  // --limit: 0 for every task
  bool absolute = false;  // next run as an RFC 3339 time instead of "in 4m"
};

// The filter the options describe; a bad --state or --limit is a usage error.
Result<store::TaskFilter> filter_of(const ListOptions& options) {
  store::TaskFilter filter = options.filter;
  if (!options.state.empty()) {
    auto condition = core::parse_condition(options.state);
    if (!condition) return fail(ErrorKind::usage, "list: --state: " + condition.error().message);
    filter.condition = *condition;
  }
  if (options.limit < 0) return fail(ErrorKind::usage, "list: --limit must be at least 1");
  if (options.limit > 0) filter.limit = options.limit;
  return filter;
}

Colour outcome_colour(const std::optional<core::RunStatus>& status) {
  if (!status) return Colour::none;
  switch (*status) {
    case core::RunStatus::succeeded: return Colour::green;
    case core::RunStatus::failed:
    case core::RunStatus::timed_out:
    case core::RunStatus::lost: return Colour::red;
    case core::RunStatus::dropped:
    case core::RunStatus::skipped: return Colour::yellow;
    default: return Colour::none;
  }
}

Colour condition_colour(const core::TaskState& state) {
  switch (core::condition_of(state)) {
    case core::Condition::disabled: return Colour::yellow;
    case core::Condition::paused: return Colour::cyan;
    case core::Condition::failing: return Colour::red;
    case core::Condition::active: return Colour::none;
  }
  return Colour::none;
}

// Relative to now, or with --absolute shown in `absolute`'s style.
std::string time_cell(const std::optional<core::Time>& time, core::Time now,
                      const std::optional<core::TimeStyle>& absolute) {
  return absolute && time ? core::show_time(*time, *absolute) : relative_time(time, now);
}

// "failing since 4m ago" for a failing task; else its condition.
std::string condition_cell(const core::TaskState& state, core::Time now, const std::optional<core::TimeStyle>& absolute) {
  auto condition = task_condition(state);
  if (core::condition_of(state) != core::Condition::failing || !state.failing_since) return condition;
  return fmt::format("{} since {}", condition, time_cell(state.failing_since, now, absolute));
}

// A malformed row's STATE is "malformed"; its other cells show what could be read.
std::vector<Cell> list_row(const store::StoredTask& stored, core::Time now, const std::optional<core::TimeStyle>& absolute) {
  const auto& task = store::readable(stored);
  Cell state_cell = stored ? Cell{condition_cell(task.state, now, absolute), condition_colour(task.state)}
                           : Cell{"malformed", Colour::red};
  return {{task.definition.name},
          {core::describe_schedule(task.definition)},
          {time_cell(task.state.next_run_at, now, absolute)},
          {last_outcome(task.state), outcome_colour(task.state.last_status)},
          state_cell,
          {describe_command(task.definition.command)}};
}

// Each task is printed as it is read: a million tasks list in the memory of a few.
Result<void> list(const Context& context, const ListOptions& options) {
  auto filter = TRY(filter_of(options));
  auto db = TRY(context.open_db_to_read());
  if (context.json)
    return print_json_array(
        [&](const store::TaskVisitor& visit) { return ops::list_tasks(db, filter, ops::Detail::full, visit); },
        write_stored_task);
  core::Time now = context.clock.now();
  // Too wide for the terminal: COMMAND and SCHEDULE are cut first, then
  // COMMAND, LAST and SCHEDULE dropped in that order.
  TableWriter table({{"NAME"}, {"SCHEDULE", 12, 2}, {"NEXT"}, {"LAST", 0, 3}, {"STATE"}, {"COMMAND", 16, 4}},
                    stdout_output());
  auto absolute = options.absolute ? std::optional{context.time_style(now)} : std::nullopt;
  TRY(ops::list_tasks(db, filter, ops::Detail::headline, [&](const store::StoredTask& task) -> Result<void> {
    table.add(list_row(task, now, absolute));
    return {};
  }));
  table.finish();
  return {};
}

std::string optional_time(const std::optional<core::Time>& time, core::Time now, const core::TimeStyle& style) {
  if (!time) return "-";
  return fmt::format("{} ({})", core::show_time(*time, style), relative_time(time, now));
}

// "gap skip, repeat once (the default)" (show's "dst" line).
std::string dst_text(const core::DstPolicy& dst, const core::Schedule& schedule) {
  const auto rule = dst.over(core::default_dst(schedule));
  auto part = [](std::string_view name, std::string_view value, bool set) {
    return fmt::format("{} {}{}", name, value, set ? "" : " (the default)");
  };
  return part("gap", core::to_string(rule.gap), dst.gap.has_value()) + ", " +
         part("repeat", core::to_string(rule.repeat), dst.repeat.has_value());
}

// A task without a next run has a schedule that ended, or a run in flight
// whose end plans the next (--after-finish, --catch-up all).
std::string next_run_text(const core::Task& task, const core::Schedule* schedule, core::Time now,
                          const core::TimeStyle& style) {
  const auto& s = task.state;
  if (!s.next_run_at && !s.disabled_until_update && core::runs_at_boot(task.definition)) return "at the next boot";
  if (s.next_run_at || s.disabled_until_update || task.definition.schedule_kind == core::ScheduleKind::manual)
    return optional_time(s.next_run_at, now, style);
  if (schedule && core::next_slot_after(*schedule, now)) return "when the run in flight has ended";
  return "none: the schedule has ended (COUNT or UNTIL)";
}

// show's lines, printed as they are added. A line stands for columns of
// the task's row: when one of them is malformed, the line says what is
// wrong with it instead of a value that was not read (and is printed even
// where a value would not be).
class TaskLines {
 public:
  explicit TaskLines(const std::vector<store::ColumnProblem>& problems) : problems_(problems) {}

  void add(std::string_view key, const std::string& value, std::initializer_list<std::string_view> columns = {},
           bool shown = true) {
    add(key, value, std::span(columns.begin(), columns.size()), shown);
  }

  void add(std::string_view key, const std::string& value, std::span<const std::string_view> columns, bool shown) {
    std::string wrong;
    for (const auto& problem : problems_) {
      if (std::ranges::find(columns, problem.column) == columns.end()) continue;
      wrong += fmt::format("{}{}: {}", wrong.empty() ? "malformed: " : "; ", problem.column, problem.what);
      told_.push_back(&problem);
    }
    if (!wrong.empty() || shown) print(key, wrong.empty() ? value : wrong);
  }

  // A line for each malformed column no line stood for.
  void finish() {
    for (const auto& problem : problems_) {
      if (std::ranges::find(told_, &problem) == told_.end())
        print("malformed", fmt::format("{}: {}", problem.column, problem.what));
    }
  }

 private:
  // Every value printable: owners, commands, env values and reasons are anyone's text.
  static void print(std::string_view key, const std::string& value) {
    fmt::print("{:<18}{}\n", key, core::printable(value));
  }

  const std::vector<store::ColumnProblem>& problems_;
  std::vector<const store::ColumnProblem*> told_;
};

// The lines of the fields that are not in the table, before the line of
// the table's field that they come before.
void add_lines_before(TaskLines& lines, const core::TaskField& field, const core::TaskDefinition& d,
                      const core::Schedule* schedule) {
  if (field.name == "overlap") {
    std::string ladder;
    for (auto delay : d.retry) ladder += (ladder.empty() ? "" : ",") + core::format_duration(delay);
    lines.add("retry", ladder.empty() ? "none" : ladder, {"retry"});
    lines.add("owner", d.owner, {}, !d.owner.empty());
  }
  if (field.name == "notify") {
    lines.add("cwd", d.cwd, {}, !d.cwd.empty());
    lines.add("env", "", {"env"}, false);
    for (const auto& [name, value] : d.env) lines.add("env", name + "=" + value);
  }
  if (field.label == "limits")
    lines.add("dst", schedule ? dst_text(d.dst, *schedule) : "", {}, d.dst.any() && schedule);
}

// The line of `fields`, which share a label: shown always, or when one of
// them is not its initial text.
void add_field_line(TaskLines& lines, const core::TaskDefinition& d, std::span<const core::TaskField> fields) {
  std::vector<std::string_view> columns;
  bool shown = fields.front().shown == core::Shown::always;
  for (const auto& field : fields) {
    columns.push_back(field.column);
    shown = shown || field.text(d) != field.initial;
  }
  lines.add(fields.front().label, fields.front().shown_text(d), columns, shown);
}

// The lines of the table's fields (and of those before them that are not in it).
void add_field_lines(TaskLines& lines, const core::TaskDefinition& d, const core::Schedule* schedule) {
  auto fields = core::task_fields();
  for (std::size_t i = 0; i < fields.size();) {
    add_lines_before(lines, fields[i], d, schedule);
    std::size_t end = i + 1;
    if (fields[i].shown != core::Shown::apart) {
      while (end < fields.size() && fields[end].label == fields[i].label) ++end;
      add_field_line(lines, d, fields.subspan(i, end - i));
    }
    i = end;
  }
}

// "failing since T (4m ago); its retries ran out at T, the plan goes on".
std::string failing_text(const core::TaskState& s, core::Time now, const core::TimeStyle& style) {
  auto text = fmt::format("failing since {}", optional_time(s.failing_since, now, style));
  if (s.ladder_exhausted_at)
    text += fmt::format("; its retries ran out at {}, the plan goes on", core::show_time(*s.ladder_exhausted_at, style));
  return text;
}

// "disabled: why", "failing since …", or of a malformed row that taskd does not run it.
std::string state_text(const store::StoredTask& stored, core::Time now, const core::TimeStyle& style) {
  const auto& s = store::readable(stored).state;
  if (!stored) return fmt::format("malformed, not run ({}): taskd edit sets what is wrong", task_condition(s));
  if (core::condition_of(s) == core::Condition::failing && s.failing_since) return failing_text(s, now, style);
  return task_condition(s) + (s.disabled_until_update ? ": " + s.disabled_reason : "");
}

void print_task(const store::StoredTask& stored, core::Time now, const core::TimeStyle& style) {
  static const std::vector<store::ColumnProblem> none;
  const auto& task = store::readable(stored);
  const auto& d = task.definition;
  const auto& s = task.state;
  const auto& schedule = task.schedule;
  TaskLines lines(stored ? none : stored.error().problems);
  lines.add("name", d.name);
  lines.add("command", describe_command(d.command) + (d.command.shell ? "  (via /bin/sh -c)" : ""),
            {"command", "shell"});
  lines.add("schedule", core::describe_schedule(d),
            {"schedule_kind", "schedule_spec", "tz", "dtstart", "after_finish", "phase", "after_task",
             "after_finished"});
  lines.add("state", state_text(stored, now, style),
            {"disabled_until_update", "paused", "failing_since", "ladder_exhausted_at"});
  lines.add("next run", next_run_text(task, schedule ? &*schedule : nullptr, now, style), {"next_run_at"});
  lines.add("last run", optional_time(s.last_run_at, now, style), {"last_run_at"});
  lines.add("last status", last_outcome(s), {"last_status"});
  lines.add("last success", optional_time(s.last_succeeded_at, now, style), {"last_succeeded_at"});
  lines.add("attempt", fmt::format("{} (run index {})", s.attempt_no, s.run_index), {"attempt_no", "run_index"});
  if (schedule) {
    auto timebox = core::effective_timeout(d, *schedule, now);
    lines.add("timeout", timebox ? core::format_duration(*timebox) : "none", {"timeout"});
  }
  add_field_lines(lines, d, schedule ? &*schedule : nullptr);
  lines.add("from defaults", fmt::format("{} (taskd defaults)", fmt::join(d.from_defaults, ", ")), {"from_defaults"},
            !d.from_defaults.empty());
  lines.finish();
}

Result<void> show(const Context& context, const std::string& name) {
  auto db = TRY(context.open_db_to_read());
  auto shown = TRY(ops::show_task(db, name));
  if (context.json) {
    print_json(ops::shown_task_json(shown));
  } else {
    auto now = context.clock.now();
    print_task(shown.task, now, context.time_style(now));
    if (shown.last_run && shown.last_run->usage.cpu)
      fmt::print("{:<18}{} (CPU, peak memory)\n", "last run used", usage_text(shown.last_run->usage));
  }
  return {};
}

struct RenameOptions {
  std::string old_name;
  std::string new_name;
};

// What rename did: the followers that follow the new name.
void print_renamed(const RenameOptions& options, std::int64_t followers, bool json) {
  if (json) {
    print_json(ops::renamed_json(options.old_name, options.new_name, followers));
    return;
  }
  fmt::print("renamed {} to {}", core::printable(options.old_name), core::printable(options.new_name));
  if (followers > 0)
    fmt::print(" ({} {} --after it now after {})", followers, followers == 1 ? "task" : "tasks",
               core::printable(options.new_name));
  fmt::print("\n");
}

Result<void> rename(const Context& context, const RenameOptions& options) {
  TRY(core::validate_task_name(options.new_name));  // bad input is told before the database is opened
  auto db = TRY(context.open_db(store::IfMissing::use_empty));
  auto followers = TRY(ops::rename_task(db, options.old_name, options.new_name));
  print_renamed(options, followers, context.json);
  return {};
}

// A command that changes the tasks it selects; it says what it did in
// `wording`'s words, or (without one) nothing.
void add_change_command(CLI::App& app, Context& context, Action& action, ops::Change change, const std::string& summary,
                        const Wording* wording) {
  auto selection = std::make_shared<ops::Selection>();
  std::string verb(ops::verb_of(change));
  auto* command = app.add_subcommand(verb, summary);
  command->add_option("names", selection->names, "Task names");
  if (change == ops::Change::remove) {
    command->add_option("--owner", selection->owner, "Every task this owner created");
  } else {
    command->add_option("--group", selection->group, "Every task of this group");
  }
  command->callback([&context, &action, selection, change, wording] {
    action = [&context, selection, change, wording]() -> Result<void> {
      auto db = TRY(context.open_db(store::IfMissing::use_empty));
      auto outcomes = TRY(ops::change_tasks(db, *selection, change, context.clock));
      if (wording) print_outcomes(outcomes, change, *wording, context.json);
      return {};
    };
  });
}

}  // namespace

void add_task_commands(CLI::App& app, Context& context, Action& action) {
  auto list_options = std::make_shared<ListOptions>();
  auto* list_command = app.add_subcommand("list", "List tasks");
  list_command->add_option("--group", list_options->filter.group, "Only this group");
  list_command->add_option("--owner", list_options->filter.owner, "Only this owner's tasks");
  list_command->add_option("--on-host", list_options->filter.on_host, "Only the tasks pinned to this host");
  list_command->add_option("--state", list_options->state, "Only tasks that are active, paused, disabled or failing");
  list_command->add_option("--name", list_options->filter.name_glob, "Only names that match this glob (tmp-*)");
  list_command->add_option("--limit", list_options->limit, "At most N tasks (default: all)");
  list_command->add_flag("--absolute", list_options->absolute, "Next run as an RFC 3339 time, not \"in 4m\"");
  list_command->callback(
      [&context, &action, list_options] { action = [&context, list_options] { return list(context, *list_options); }; });

  auto name = std::make_shared<std::string>();
  auto* show_command = app.add_subcommand("show", "Show one task: definition and state");
  show_command->add_option("name", *name, "Task name")->required();
  show_command->callback([&context, &action, name] { action = [&context, name] { return show(context, *name); }; });

  auto rename_options = std::make_shared<RenameOptions>();
  auto* rename_command =
      app.add_subcommand("rename", "Give a task another name; its state, history and followers go with it");
  rename_command->add_option("old", rename_options->old_name, "The task's name")->required();
  rename_command->add_option("new", rename_options->new_name, "Its new name")->required();
  rename_command->callback([&context, &action, rename_options] {
    action = [&context, rename_options] { return rename(context, *rename_options); };
  });

  add_change_command(app, context, action, ops::Change::remove, "Remove tasks and their history", nullptr);
  add_change_command(app, context, action, ops::Change::pause, "Stop scheduling tasks until resumed", &pause_wording);
  add_change_command(app, context, action, ops::Change::resume, "Schedule paused tasks again from the next slot",
                     &resume_wording);
  add_change_command(app, context, action, ops::Change::enable,
                     "Enable tasks that failures disabled, from the next slot", &enable_wording);
}

}  // namespace taskd::cli
