#include "cli/task_options.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <unistd.h>

#include "cli/context.hpp"
#include "core/defaults.hpp"
#include "core/hash.hpp"
#include "core/policy.hpp"
#include "core/task_fields.hpp"
#include "core/text.hpp"
#include "exec/cgroup.hpp"

namespace taskd::cli {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

Result<std::vector<int>> parse_exit_codes(const std::string& text) {
  std::vector<int> codes;
  for (const auto& item : core::list_items(text)) {
    int code = -1;
    auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), code);
    if (error != std::errc() || end != item.data() + item.size() || code < 1 || code > 255)
      return fail(ErrorKind::bad_input,
                  fmt::format("--permanent-exit \"{}\": \"{}\" is not an exit code from 1 to 255", text, item));
    codes.push_back(code);
  }
  return codes;
}

bool is_env_name(std::string_view name) {
  if (name.empty() || (name.front() >= '0' && name.front() <= '9')) return false;
  return std::ranges::all_of(name, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

Result<std::vector<core::EnvVar>> parse_env(const std::vector<std::string>& assignments) {
  std::vector<core::EnvVar> env;
  for (const auto& assignment : assignments) {
    auto equals = assignment.find('=');
    std::string name = assignment.substr(0, equals);
    if (equals == std::string::npos || !is_env_name(name))
      return fail(ErrorKind::bad_input,
                  fmt::format("--env \"{}\": expected NAME=VALUE with a NAME of letters, digits and _", assignment));
    env.emplace_back(name, assignment.substr(equals + 1));
  }
  return env;
}

Result<core::Command> build_command(const TaskOptions& options) {
  if (options.command.empty())
    return fail(ErrorKind::usage, "add: no program given; put it after --, e.g. taskd add NAME --every 5m -- PROGRAM ARG…");
  if (!options.shell) return core::Command{options.command, false};
  std::string line;
  for (const auto& part : options.command) line += line.empty() ? part : " " + part;
  return core::Command{{line}, true};
}

// --retry and --permanent-exit.
Result<void> apply_retries(const TaskOptions& options, core::TaskDefinition& d) {
  d.retry = TRY(core::parse_retry_ladder(options.retry));
  d.permanent_exit = TRY(parse_exit_codes(options.permanent_exit));
  return {};
}

// The schedule options; with --after alone, --manual (only the upstream
// and `taskd trigger` start the task).
ScheduleOptions schedule_or_manual(const TaskOptions& options) {
  auto schedule = options.schedule;
  bool none = schedule.every.empty() && schedule.cron.empty() && schedule.rrule.empty() && !schedule.manual;
  if (none && !options.after.empty()) schedule.manual = true;
  return schedule;
}

// A time list's text with `more` after it.
void append_dates(std::string& text, const std::vector<core::SetDate>& more) {
  if (more.empty()) return;
  if (!text.empty()) text += ',';
  text += core::set_dates_text(more);
}

// --rrule's iCalendar form spread over the options it stands for: the rule,
// --dtstart, --tz, --rdate and --exdate.
Result<TaskOptions> spread_recurrence_set(TaskOptions options) {
  auto& schedule = options.schedule;
  auto set = core::parse_recurrence_set(schedule.rrule);
  if (!set) return fail(ErrorKind::bad_input, "--rrule: " + set.error().message);
  if (set->dtstart && !schedule.dtstart.empty())
    return fail(ErrorKind::bad_input, "--rrule has a DTSTART line and --dtstart is given: give one");
  if (!set->zone.empty() && !schedule.tz.empty() && set->zone != schedule.tz)
    return fail(ErrorKind::bad_input,
                fmt::format("--rrule's DTSTART is in {} and --tz is {}: give one zone", set->zone, schedule.tz));
  // A rule that reads as the iCalendar form again ("RDATE" alone, say) is
  // a property without its value, never a rule: spread once, not forever.
  if (core::is_recurrence_set(set->rule))
    return fail(ErrorKind::bad_input,
                fmt::format("--rrule: \"{}\" is not a rule (FREQ=...); a DTSTART, RDATE or EXDATE line is NAME:VALUE",
                            set->rule));
  schedule.rrule = set->rule;
  if (set->dtstart) schedule.dtstart = core::format_local(*set->dtstart);
  if (!set->zone.empty()) schedule.tz = set->zone;
  append_dates(options.field("rdate"), set->rdate);
  append_dates(options.field("exdate"), set->exdate);
  return options;
}

}  // namespace

Result<void> require_utf8_text(const core::TaskDefinition& d) {
  for (const auto& argument : d.command.argv) {
    TRY(core::require_utf8("command", argument));
  }
  for (const auto& [name, value] : d.env) {
    TRY(core::require_utf8("--env", name + "=" + value));
  }
  const std::pair<std::string, const std::string*> texts[] = {
      {fmt::format("--{}", core::to_string(d.schedule_kind)), &d.schedule_spec},
      {"--cwd", &d.cwd},
      {"--owner", &d.owner},
      {"--group", &d.group},
      {"--notify", &d.notify}};
  for (const auto& [option, text] : texts) {
    TRY(core::require_utf8(option, *text));
  }
  return {};
}

Result<core::Task> build_task(const TaskOptions& options, core::Time now) {
  if (core::is_recurrence_set(options.schedule.rrule)) return build_task(TRY(spread_recurrence_set(options)), now);
  core::Task task;
  auto& d = task.definition;
  d.name = TRY(core::validate_task_name(options.name));
  d.command = TRY(build_command(options));
  auto after = core::parse_upstream(options.after);
  if (!after) return fail(ErrorKind::bad_input, "--after: " + after.error().message);
  d.after = *after;
  auto schedule = TRY(apply_schedule(schedule_or_manual(options), d, now));
  for (const auto& field : core::task_fields()) TRY(field.set(options.field(field), d, schedule, now));
  schedule = TRY(core::with_set_dates(std::move(schedule), d));
  TRY(apply_retries(options, d));
  d.env = TRY(parse_env(options.env));
  d.from_defaults = options.from_defaults;
  d.cwd = options.cwd.empty() ? "" : std::filesystem::absolute(options.cwd).lexically_normal().string();
  // The command line was checked as it came; a --cwd made absolute, or a
  // task file's owner and cwd taken from its path, may still not be UTF-8.
  TRY(require_utf8_text(d));
  task.schedule = std::move(schedule);
  return task;
}

void warn_if_limits_unavailable(const core::TaskDefinition& definition) {
  auto why = exec::limits_unavailable_here(definition.limits);
  if (!why.empty())
    fmt::print(stderr, "taskd: warning: {}: {}; its runs fail where taskd cannot apply its limits\n", definition.name,
               why);
}

void warn_if_cannot_switch_user(const core::TaskDefinition& definition, const ops::SchedulerUsers& schedulers) {
  if (definition.user.empty()) return;
  if (schedulers.known) {
    if (schedulers.not_root.empty()) return;
    fmt::print(stderr,
               "taskd: warning: {}: only a scheduler running as root can run it as {}, and the database's scheduler "
               "on {} is not root; its runs fail there\n",
               definition.name, definition.user, fmt::join(schedulers.not_root, ", "));
    return;
  }
  if (::geteuid() == 0) return;
  fmt::print(stderr,
             "taskd: warning: {}: only a scheduler running as root can run it as {}, and you are not root (uid {}); "
             "its runs fail under a scheduler that is not root\n",
             definition.name, definition.user, ::geteuid());
}

namespace {

// The option of a field of the table; CLI11 reads a whole number, so that
// one that is not stays a usage error. A flag takes no value; --no-… unsets it.
void add_field_option(CLI::App& command, TaskOptions& options, const core::TaskField& field) {
  auto& text = options.field(field);
  if (field.file_form == core::FileForm::flag) {
    command.add_flag_function(
        fmt::format("{},!--no-{}", field.flag(), field.flag().substr(2)),
        [&text](std::int64_t count) { text = count > 0 ? "true" : "false"; }, std::string(field.help));
  } else if (field.file_form == core::FileForm::whole_number) {
    command.add_option_function<int>(
        field.flag(), [&text](const int& number) { text = std::to_string(number); }, std::string(field.help));
  } else {
    command.add_option(field.flag(), text, std::string(field.help));
  }
}

}  // namespace

void add_definition_options(CLI::App& command, TaskOptions& options) {
  command.add_option("command", options.command, "The program and its arguments, after --");
  add_schedule_options(command, options.schedule);
  for (const auto& field : core::task_fields()) {
    if (field.name == "overlap") {
      command.add_option("--retry", options.retry, "Retry delays after failed attempts (default 0s,1m,5m,15m,30m,1h)");
      command.add_option("--permanent-exit", options.permanent_exit,
                         "Exit codes that disable the task at once (default 78)");
    }
    if (field.name == "owner") {
      command.add_flag("--shell,!--no-shell", options.shell, "Run the command as one string with /bin/sh -c");
      command.add_option("--cwd", options.cwd, "Working directory of the command");
      command.add_option("--env", options.env, "NAME=VALUE for the command's environment (repeatable)")
          ->allow_extra_args(false);
    }
    add_field_option(command, options, field);
  }
  command.add_option("--after", options.after,
                     "Run when a run of TASK succeeds, or with TASK:finished whatever its outcome ('' for none)");
}

namespace {


template <auto Field>
void copy_field(TaskOptions& to, const TaskOptions& from) {
  to.*Field = from.*Field;
}

template <auto Field>
void copy_schedule_field(TaskOptions& to, const TaskOptions& from) {
  to.schedule.*Field = from.schedule.*Field;
}

using FieldCopy = void (*)(TaskOptions&, const TaskOptions&);

// Each option `edit` takes, by the name CLI11 gives it, and its field.
const std::map<std::string, FieldCopy>& option_fields() {
  static const std::map<std::string, FieldCopy> fields{
      {"command", copy_field<&TaskOptions::command>},
      {"--retry", copy_field<&TaskOptions::retry>},
      {"--permanent-exit", copy_field<&TaskOptions::permanent_exit>},
      {"--shell", copy_field<&TaskOptions::shell>},
      {"--cwd", copy_field<&TaskOptions::cwd>},
      {"--env", copy_field<&TaskOptions::env>},
      {"--after", copy_field<&TaskOptions::after>},
      {"--every", copy_schedule_field<&ScheduleOptions::every>},
      {"--cron", copy_schedule_field<&ScheduleOptions::cron>},
      {"--rrule", copy_schedule_field<&ScheduleOptions::rrule>},
      {"--phase", copy_schedule_field<&ScheduleOptions::phase>},
      {"--after-finish", copy_schedule_field<&ScheduleOptions::after_finish>},
      {"--manual", copy_schedule_field<&ScheduleOptions::manual>},
      {"--tz", copy_schedule_field<&ScheduleOptions::tz>},
      {"--dtstart", copy_schedule_field<&ScheduleOptions::dtstart>},
      {"--jitter", copy_schedule_field<&ScheduleOptions::jitter>},
      {"--dst-gap", copy_schedule_field<&ScheduleOptions::dst_gap>},
      {"--dst-repeat", copy_schedule_field<&ScheduleOptions::dst_repeat>},
  };
  return fields;
}

}  // namespace

ScheduleOptions schedule_options_of(const core::TaskDefinition& d) {
  ScheduleOptions schedule;
  switch (d.schedule_kind) {
    case core::ScheduleKind::every: {
      schedule.every = d.schedule_spec;
      schedule.after_finish = d.after_finish;
      auto interval = core::parse_duration(d.schedule_spec);
      // Only a default phase has milliseconds; one given with --phase is whole seconds.
      if (interval && d.phase != core::default_phase(d.name, *interval))
        schedule.phase = core::format_duration(std::chrono::duration_cast<core::Seconds>(d.phase));
      break;
    }
    case core::ScheduleKind::cron: schedule.cron = d.schedule_spec; break;
    case core::ScheduleKind::rrule: schedule.rrule = d.schedule_spec; break;
    case core::ScheduleKind::manual: schedule.manual = true; break;
  }
  schedule.tz = d.tz;
  if (d.dtstart) schedule.dtstart = core::format_local(*d.dtstart);
  if (d.jitter.count() > 0) schedule.jitter = core::format_duration(d.jitter);
  if (d.dst.gap) schedule.dst_gap = core::to_string(*d.dst.gap);
  if (d.dst.repeat) schedule.dst_repeat = core::to_string(*d.dst.repeat);
  return schedule;
}

TaskOptions options_of(const core::TaskDefinition& d) {
  TaskOptions options;
  options.name = d.name;
  options.command = d.command.argv;
  options.shell = d.command.shell;
  options.schedule = schedule_options_of(d);
  options.retry = core::retry_ladder_text(d.retry);
  options.permanent_exit = d.permanent_exit.empty() ? "none" : fmt::format("{}", fmt::join(d.permanent_exit, ","));
  for (const auto& [name, value] : d.env) options.env.push_back(name + "=" + value);
  options.cwd = d.cwd;
  for (const auto& field : core::task_fields()) options.field(field) = field.text(d);
  options.after = core::to_string(d.after);
  options.from_defaults = d.from_defaults;
  return options;
}

std::vector<std::string> TaskOptions::initial_field_texts() {
  std::vector<std::string> texts;
  for (const auto& field : core::task_fields()) texts.emplace_back(field.initial);
  return texts;
}

std::vector<std::string> TaskOptions::every_defaultable_field() {
  auto fields = core::defaultable_fields();
  return {fields.begin(), fields.end()};
}

void TaskOptions::set_by_task(std::string_view option_or_key) {
  std::string field(option_or_key.starts_with("--") ? option_or_key.substr(2) : option_or_key);
  std::ranges::replace(field, '-', '_');
  std::erase(from_defaults, field);
}

namespace {

std::size_t index_of(const core::TaskField& field) {
  return static_cast<std::size_t>(&field - core::task_fields().data());
}

std::size_t index_named(std::string_view name) {
  auto fields = core::task_fields();
  return static_cast<std::size_t>(std::ranges::find(fields, name, &core::TaskField::name) - fields.begin());
}

}  // namespace

std::string& TaskOptions::field(const core::TaskField& field) { return field_texts[index_of(field)]; }
const std::string& TaskOptions::field(const core::TaskField& field) const { return field_texts[index_of(field)]; }
std::string& TaskOptions::field(std::string_view field_name) { return field_texts.at(index_named(field_name)); }
const std::string& TaskOptions::field(std::string_view field_name) const {
  return field_texts.at(index_named(field_name));
}

void overlay_options(TaskOptions& base, const TaskOptions& edits, const std::set<std::string>& given) {
  if (given.contains("--every") || given.contains("--cron") || given.contains("--rrule") || given.contains("--manual")) {
    ScheduleOptions kept;
    if (given.contains("--cron") || given.contains("--rrule")) {
      kept.tz = base.schedule.tz;
      kept.dst_gap = base.schedule.dst_gap;
      kept.dst_repeat = base.schedule.dst_repeat;
    }
    if (!given.contains("--manual")) kept.jitter = base.schedule.jitter;
    base.schedule = kept;
  }
  for (const auto& [name, copy] : option_fields()) {
    if (given.contains(name)) copy(base, edits);
  }
  for (const auto& option : given) base.set_by_task(option);
  for (const auto& field : core::task_fields()) {
    if (given.contains(field.flag())) base.field(field) = edits.field(field);
  }
}

}  // namespace taskd::cli
