#include <charconv>
#include <fmt/format.h>
#include <memory>
#include <unistd.h>

#include "cli/context.hpp"
#include "cli/format.hpp"
#include "cli/json.hpp"
#include "cli/schedule_options.hpp"
#include "core/policy.hpp"
#include "exec/spawn.hpp"
#include "store/tasks.hpp"

namespace taskd::cli {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

struct AddOptions {
  std::string name;
  std::vector<std::string> command;
  ScheduleOptions schedule;
  std::string timeout;
  std::string kill_grace = "10s";
  std::string tolerance;
  std::string retry = "0s,1m,5m,15m,30m,1h";
  std::string permanent_exit = "78";
  std::vector<std::string> env;
  std::string cwd;
  std::string owner;
  std::string group;
  int priority = 0;
  bool start_now = false;
  bool shell = false;
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  if (text == "none") return items;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

Result<std::vector<core::Seconds>> parse_ladder(const std::string& text) {
  std::vector<core::Seconds> ladder;
  for (const auto& item : split_list(text)) {
    auto delay = core::parse_duration(item);
    if (!delay) return fail(ErrorKind::bad_input, "--retry: " + delay.error().message);
    if (!ladder.empty() && *delay < ladder.back())
      return fail(ErrorKind::bad_input, fmt::format("--retry \"{}\": the delays must not decrease ({} comes after {})",
                                                    text, item, core::format_duration(ladder.back())));
    ladder.push_back(*delay);
  }
  return ladder;
}

Result<std::vector<int>> parse_exit_codes(const std::string& text) {
  std::vector<int> codes;
  for (const auto& item : split_list(text)) {
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

Result<core::Command> build_command(const AddOptions& options) {
  if (options.command.empty())
    return fail(ErrorKind::usage, "add: no program given; put it after --, e.g. taskd add NAME --every 5m -- PROGRAM ARG…");
  if (!options.shell) return core::Command{options.command, false};
  std::string line;
  for (const auto& part : options.command) line += line.empty() ? part : " " + part;
  return core::Command{{line}, true};
}

Result<void> apply_policy(const AddOptions& options, core::TaskDefinition& d, core::Time now) {
  auto timeout = optional_duration(options.timeout, "--timeout");
  if (!timeout) return std::unexpected(timeout.error());
  if (*timeout && (*timeout)->count() <= 0) return fail(ErrorKind::bad_input, "--timeout: must be longer than 0s");
  d.timeout = *timeout;
  auto grace = core::parse_duration(options.kill_grace);
  if (!grace) return fail(ErrorKind::bad_input, "--kill-grace: " + grace.error().message);
  d.kill_grace = *grace;
  auto tolerance = optional_duration(options.tolerance, "--tolerance");
  if (!tolerance) return std::unexpected(tolerance.error());
  auto interval = core::interval_around(core::schedule_of(d).value(), now);
  if (*tolerance && interval && **tolerance >= *interval)
    return fail(ErrorKind::bad_input, fmt::format("--tolerance {} must be shorter than the interval {}",
                                                  options.tolerance, core::format_duration(*interval)));
  d.tolerance = *tolerance;
  auto ladder = parse_ladder(options.retry);
  if (!ladder) return std::unexpected(ladder.error());
  d.retry = *ladder;
  auto codes = parse_exit_codes(options.permanent_exit);
  if (!codes) return std::unexpected(codes.error());
  d.permanent_exit = *codes;
  return {};
}

Result<core::TaskDefinition> build_definition(const AddOptions& options, core::Time now) {
  core::TaskDefinition d;
  auto name = core::validate_task_name(options.name);
  if (!name) return std::unexpected(name.error());
  d.name = *name;
  auto command = build_command(options);
  if (!command) return std::unexpected(command.error());
  d.command = *command;
  if (auto schedule = apply_schedule(options.schedule, d, now); !schedule) return std::unexpected(schedule.error());
  if (auto policy = apply_policy(options, d, now); !policy) return std::unexpected(policy.error());
  auto env = parse_env(options.env);
  if (!env) return std::unexpected(env.error());
  d.env = *env;
  d.cwd = options.cwd.empty() ? "" : std::filesystem::absolute(options.cwd).lexically_normal().string();
  d.owner = options.owner;
  d.group = options.group;
  d.priority = options.priority;
  return d;
}

// A program that is not there now may be installed later, or found under
// another PATH: worth a warning, not a refusal.
void warn_if_missing(const core::TaskDefinition& d) {
  if (d.command.shell) return;
  const char* path = std::getenv("PATH");
  std::string path_list = path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (const auto& [name, value] : d.env) {
    if (name == "PATH") path_list = value;
  }
  auto program = exec::find_program(d.command.argv.front(), path_list);
  if (program.empty() || ::access(program.c_str(), X_OK) != 0)
    fmt::print(stderr, "taskd: warning: {}: program \"{}\" is not found in PATH now\n", d.name, d.command.argv.front());
}

Result<void> add_task(const AddOptions& options, const Context& context) {
  core::Time now = context.clock.now();
  auto definition = build_definition(options, now);
  if (!definition) return std::unexpected(definition.error());
  auto schedule = core::schedule_of(*definition);
  if (!schedule) return std::unexpected(schedule.error());
  warn_if_missing(*definition);
  auto db = context.open_db(store::IfMissing::create);
  if (!db) return std::unexpected(db.error());
  auto state = core::on_create(*schedule, now, options.start_now);
  auto id = store::insert_task(*db, *definition, state, now);
  if (!id) return std::unexpected(id.error());
  core::Task task{*id, *definition, state};
  if (context.json) {
    print_json(task_json(task));
  } else {
    fmt::print("added {}: {}, next run {}\n", task.definition.name, describe_schedule(task.definition),
               state.next_run_at ? core::format_rfc3339(*state.next_run_at) : "none");
  }
  return {};
}

}  // namespace

void add_add_command(CLI::App& app, Context& context, Action& action) {
  auto options = std::make_shared<AddOptions>();
  auto* add = app.add_subcommand("add", "Add a task: taskd add NAME --every DUR|--cron EXPR|--rrule RULE [OPTIONS] -- PROGRAM [ARG…]");
  add->add_option("name", options->name, "Task name: letters, digits and ._:@/-")->required();
  add->add_option("command", options->command, "The program and its arguments, after --");
  add_schedule_options(*add, options->schedule);
  add->add_flag("--start-now", options->start_now, "Run once at the next tick, then follow the schedule");
  add->add_option("--timeout", options->timeout, "Timebox of a run (default: half the interval)");
  add->add_option("--kill-grace", options->kill_grace, "Time between SIGTERM and SIGKILL at the timebox (default 10s)");
  add->add_option("--tolerance", options->tolerance, "Drop-rule tolerance (default: 10% of the interval)");
  add->add_option("--retry", options->retry, "Retry delays after failed attempts (default 0s,1m,5m,15m,30m,1h)");
  add->add_option("--permanent-exit", options->permanent_exit, "Exit codes that disable the task at once (default 78)");
  add->add_flag("--shell", options->shell, "Run the command as one string with /bin/sh -c");
  add->add_option("--cwd", options->cwd, "Working directory of the command");
  add->add_option("--env", options->env, "NAME=VALUE for the command's environment (repeatable)")
      ->allow_extra_args(false);
  add->add_option("--owner", options->owner, "Who created the task (taskd rm --owner removes them all)");
  add->add_option("--group", options->group, "Group of the task (taskd pause --group pauses them all)");
  add->add_option("--priority", options->priority, "Higher runs first when runs queue up (default 0)");
  add->callback([&context, &action, options] { action = [&context, options] { return add_task(*options, context); }; });
}

}  // namespace taskd::cli
