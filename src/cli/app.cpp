#include "cli/app.hpp"

#include <fmt/format.h>

#include "cli/context.hpp"

namespace taskd::cli {
namespace {

constexpr const char* description =
    "taskd keeps periodic tasks and their run history in one SQLite file and runs them\n"
    "as child processes with a timebox, retries and fencing.";

int report(const core::Error& error) {
  fmt::print(stderr, "taskd: error: {}\n", error.message);
  return core::exit_code(error.kind);
}

}  // namespace

int taskd_main(int argc, char** argv) {
  Context context;
  Action action;
  CLI::App app(description, "taskd");
  app.set_version_flag("--version", "taskd " TASKD_VERSION);
  app.add_option("--db", context.db_option, "Database file (default: $TASKD_DB, else $XDG_STATE_HOME/taskd/taskd.db)");
  app.add_flag("--json", context.json, "Print data as JSON");
  app.require_subcommand(1);
  app.fallthrough();
  add_add_command(app, context, action);
  add_task_commands(app, context, action);
  add_history_commands(app, context, action);
  add_run_once_command(app, context, action);
  add_run_commands(app, context, action);
  add_status_command(app, context, action);
  add_metrics_command(app, context, action);
  add_preview_command(app, context, action);
  add_forecast_command(app, context, action);
  add_trigger_command(app, context, action);
  add_group_command(app, context, action);
  add_edit_command(app, context, action);
  add_import_command(app, context, action);
  add_apply_command(app, context, action);
  add_export_command(app, context, action);
  add_completion_commands(app, context, action);
  for (auto* command : app.get_subcommands({})) command->fallthrough();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    auto leftover = app.remaining();
    bool unknown_command = app.get_subcommands().empty() && !leftover.empty();
    std::string message = unknown_command ? fmt::format("unknown command \"{}\"", leftover.front()) : e.what();
    fmt::print(stderr, "taskd: error: {}\nRun 'taskd --help' for usage.\n", message);
    return core::exit_code(core::ErrorKind::usage);
  }
  try {
    auto done = action();
    return done ? 0 : report(done.error());
  } catch (const std::exception& e) {
    return report({core::ErrorKind::internal, e.what()});
  }
}

}  // namespace taskd::cli
