#include <fmt/format.h>
#include <memory>
#include <unistd.h>

#include "cli/context.hpp"
#include "cli/format.hpp"
#include "cli/json.hpp"
#include "cli/task_options.hpp"
#include "core/text.hpp"
#include "exec/spawn.hpp"
#include "ops/check.hpp"
#include "ops/define.hpp"

namespace taskd::cli {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

struct AddOptions {
  TaskOptions task;
  bool start_now = false;
};

// A program that is not there now may be installed later, or found under
// another PATH: worth a warning, not a refusal. A relative path is looked up
// where the run starts: its --cwd, else the scheduler's directory.
void warn_if_missing(const core::TaskDefinition& d) {
  if (d.command.shell) return;
  const std::string& name = d.command.argv.front();
  bool has_slash = name.find('/') != std::string::npos;
  if (has_slash && name.front() != '/' && d.cwd.empty()) {
    fmt::print(stderr,
               "taskd: warning: {}: program \"{}\" is relative and the task has no --cwd: it is looked up in "
               "the scheduler's directory (your home under cron)\n",
               d.name, core::printable(name));
    return;
  }
  const char* path = std::getenv("PATH");
  std::string path_list = path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (const auto& [key, value] : d.env) {
    if (key == "PATH") path_list = value;
  }
  auto program = exec::find_program(name, path_list);
  if (has_slash && name.front() != '/') program = d.cwd + "/" + name;
  if (!program.empty() && ::access(program.c_str(), X_OK) == 0) return;
  if (has_slash)
    fmt::print(stderr, "taskd: warning: {}: program \"{}\" is not an executable file now\n", d.name,
               core::printable(program));
  else
    fmt::print(stderr, "taskd: warning: {}: program \"{}\" is not found in PATH now\n", d.name,
               core::printable(name));
}

Result<void> add_task(const AddOptions& options, const Context& context) {
  core::Time now = context.clock.now();
  auto built = TRY(build_task(options.task, now));
  warn_if_missing(built.definition);
  warn_if_limits_unavailable(built.definition);
  auto db = TRY(context.open_db(store::IfMissing::create));
  auto task = TRY(ops::add_task(db, std::move(built), options.start_now, now));
  warn_if_cannot_switch_user(task.definition, TRY(ops::whom_schedulers_run_as(db, now)));
  if (auto slow = TRY(ops::slow_scheduler(db, task.schedule.value(), now)))
    fmt::print(stderr, "taskd: warning: {}: {}\n", task.definition.name, core::printable(*slow));
  if (context.json) {
    print_json(task_json(task));
  } else {
    fmt::print("added {}: {}, next run {}\n", task.definition.name, core::describe_schedule(task.definition),
               next_run_words(task, context.time_style(now)));
  }
  return {};
}

}  // namespace

void add_add_command(CLI::App& app, Context& context, Action& action) {
  auto options = std::make_shared<AddOptions>();
  auto* add = app.add_subcommand("add", "Add a task: taskd add NAME --every DUR|--cron EXPR|--rrule RULE [OPTIONS] -- PROGRAM [ARG…]");
  add->add_option("name", options->task.name, "Task name: letters, digits and ._:@/-")->required();
  add_definition_options(*add, options->task);
  add->add_flag("--start-now", options->start_now, "Run once at the next tick, then follow the schedule");
  add->callback([add, &context, &action, options] {
    for (const auto* option : add->get_options()) {
      if (option->count() > 0) options->task.set_by_task(option->get_name());
    }
    action = [&context, options] { return add_task(*options, context); };
  });
}

}  // namespace taskd::cli
