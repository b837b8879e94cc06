#include "cli/app.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/context.hpp"
#include "core/text.hpp"
#include "exec/handover.hpp"
#include "exec/privacy.hpp"
#include "store/location.hpp"
#include "web/command.hpp"

namespace taskd::cli {
namespace {

constexpr const char* description =
    "taskd keeps periodic tasks and their run history in one SQLite file and runs them\n"
    "as child processes with a timebox, retries and fencing.";

using AddCommands = void (*)(CLI::App&, Context&, Action&);

// Every command, in the order `taskd --help` lists them; completion last: it
// reads the others.
constexpr AddCommands every_command[] = {
    add_add_command,      add_task_commands,   add_history_commands, add_run_once_command,
    add_run_commands,     add_status_command,  add_metrics_command,  add_check_command,    add_preview_command,
    add_forecast_command, add_explain_command, add_trigger_command, add_backfill_command, add_group_command,
    add_calendar_command, add_edit_command,     add_defaults_command,
    add_import_command,   add_apply_command,   add_export_command,   add_copy_db_command,  add_migrate_command,
    web::add_web_command,
    add_completion_commands,
};

// What defines each command, so that a command line naming it can build it
// alone: building all of them took a sixth of a `taskd run-once`. A name
// missing here only costs that time; completion must stay out (its script
// lists the commands defined).
constexpr std::pair<std::string_view, AddCommands> command_by_name[] = {
    {"add", add_add_command},           {"list", add_task_commands},        {"show", add_task_commands},
    {"rm", add_task_commands},          {"pause", add_task_commands},       {"resume", add_task_commands},
    {"enable", add_task_commands},      {"history", add_history_commands},  {"logs", add_history_commands},
    {"rename", add_task_commands},
    {"run-once", add_run_once_command}, {"tick", add_run_commands},         {"work", add_run_commands},
    {"run", add_run_commands},          {"status", add_status_command},     {"metrics", add_metrics_command},
    {"check", add_check_command},
    {"preview", add_preview_command},   {"forecast", add_forecast_command}, {"trigger", add_trigger_command},
    {"backfill", add_backfill_command}, {"explain", add_explain_command},
    {"group", add_group_command},       {"edit", add_edit_command},         {"defaults", add_defaults_command},
    {"calendar", add_calendar_command},
    {"import-crontab", add_import_command},
    {"apply", add_apply_command},       {"export", add_export_command},     {"copy-db", add_copy_db_command},
    {"migrate", add_migrate_command},   {"web", web::add_web_command},
};

// The exit code of an error: its kind's, or the command's own.
int exit_code_of(const core::Error& error, const Context& context) {
  return context.on_error ? context.on_error(error) : core::exit_code(error.kind);
}

// Messages quote what the user gave and what rows hold: shown printable,
// they cannot move the cursor or retitle the terminal.
int report(const core::Error& error, const Context& context) {
  fmt::print(stderr, "taskd: error: {}\n", core::printable(error.message));
  return exit_code_of(error, context);
}

}  // namespace

core::TimeStyle Context::time_style(core::Time now) const {
  if (utc || json) return {};
  auto local = core::find_zone("");
  return core::time_style(local ? *local : nullptr, now);
}

namespace {

void define_global_options(CLI::App& app, Context& context) {
  app.set_version_flag("--version", "taskd " TASKD_VERSION);
  app.add_option("--db", context.db_option,
                 "Database: a file, or a PostgreSQL URI postgresql://... (default: $TASKD_DB, else "
                 "$XDG_STATE_HOME/taskd/taskd.db)")
      ->check(non_empty_path());
  app.add_option("--state-dir", context.state_dir,
                 "Where this host keeps its own files when the database is a server (default: $XDG_STATE_HOME/taskd)")
      ->check(non_empty_path());
  app.add_flag("--json", context.json, "Print data as JSON");
  app.add_flag("--utc", context.utc, "Show times in UTC (default: local time; --json is always UTC)");
  app.require_subcommand(1);
  app.fallthrough();
}

void let_commands_fall_through(CLI::App& app) {
  for (auto* command : app.get_subcommands({})) command->fallthrough();
}

// Options whose values name a file or a database: a file name is bytes,
// and taskd keeps none of these.
bool names_a_file(const CLI::App& command, const CLI::Option& option) {
  const auto& name = option.get_name();
  if (name == "--db" || name == "--state-dir" || name == "--log-file" || name == "file") return true;
  return command.get_name() == "copy-db" && (name == "--from" || name == "--to");
}

// Bad input unless every value given on the command line to `command` and
// the commands under it, file names aside, is UTF-8: taskd keeps text as
// UTF-8 (JSON, a server and task files need it), and refuses the rest here,
// before anything is written.
core::Result<void> require_utf8_values(const CLI::App& command) {
  for (const CLI::Option* option : command.get_options()) {
    if (names_a_file(command, *option)) continue;
    for (const auto& value : option->results()) {
      TRY(core::require_utf8(option->get_name(), value));
    }
  }
  for (const CLI::App* subcommand : command.get_subcommands()) {
    TRY(require_utf8_values(*subcommand));
  }
  return {};
}

int run(const CLI::App& app, const Action& action, const Context& context) {
  try {
    if (auto checked = require_utf8_values(app); !checked) return report(checked.error(), context);
    auto done = action();
    return done ? context.exit_code : report(done.error(), context);
  } catch (const std::exception& e) {
    return report({core::ErrorKind::internal, e.what()}, context);
  }
}

// The command argv names: its first word that is no option and not the
// value of --db or --state-dir. A guess: the parse decides.
std::optional<AddCommands> named_command(int argc, char** argv) {
  for (int index = 1; index < argc; ++index) {
    std::string_view word = argv[index];
    if (word == "--db" || word == "--state-dir") {
      ++index;
    } else if (!word.starts_with('-')) {
      for (const auto& [name, add] : command_by_name) {
        if (name == word) return add;
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// The options whose value may name a server with its password: --db, and
// copy-db's --from and --to.
constexpr std::string_view database_options[] = {"--db", "--from", "--to"};

// The value of `option` if `argv[index]` gives it, as "--db VALUE" or
// "--db=VALUE"; none otherwise.
char* option_value(std::string_view option, int index, int argc, char** argv) {
  std::string_view word = argv[index];
  if (word == option) return index + 1 < argc ? argv[index + 1] : nullptr;
  if (word.starts_with(option) && word.size() > option.size() && word[option.size()] == '=')
    return argv[index] + option.size() + 1;
  return nullptr;
}

// Overwrites the secrets of the databases named on the command line with
// '*', in argv itself: ps and /proc show them only for the moment taskd
// takes to get here, not for as long as `taskd run` lives. It cannot hide
// them from that moment, nor from a shell's history or a service's
// definition, so each is warned of. The words after "--" are a task's command.
void hide_passwords(int argc, char** argv) {
  for (int index = 1; index < argc && std::string_view(argv[index]) != "--"; ++index) {
    for (auto option : database_options) {
      char* value = option_value(option, index, argc, argv);
      auto spans = value ? store::secret_spans(value) : std::vector<store::Span>();
      if (spans.empty()) continue;
      for (auto span : spans) std::fill_n(value + span.offset, span.size, '*');
      fmt::print(stderr,
                 "taskd: warning: {} holds a password, which other users of this machine can see (ps, a "
                 "service's command line); keep it in ~/.pgpass or the file PGPASSFILE names, or set TASKD_DB "
                 "from an environment file only you can read\n",
                 option);
    }
  }
}

// Parses argv with only the commands `add` defines and runs the command. None
// when that parse fails: help, version and every usage error come from the
// whole command tree, word for word as before. A parse that succeeds here
// succeeds there alike: once the one command allowed is found, CLI11 reads no
// other command's name.
std::optional<int> run_alone(AddCommands add, int argc, char** argv) {
  Context context{.command_line = std::vector<std::string>(argv, argv + argc)};
  Action action;
  CLI::App app(description, "taskd");
  define_global_options(app, context);
  add(app, context, action);
  let_commands_fall_through(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError&) {
    return std::nullopt;
  }
  return run(app, action, context);
}

int run_with_every_command(int argc, char** argv) {
  Context context{.command_line = std::vector<std::string>(argv, argv + argc)};
  Action action;
  CLI::App app(description, "taskd");
  define_global_options(app, context);
  for (auto add : every_command) add(app, context, action);
  let_commands_fall_through(app);

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
    fmt::print(stderr, "taskd: error: {}\nRun 'taskd --help' for usage.\n", core::printable(message));
    return exit_code_of({core::ErrorKind::usage, message}, context);
  }
  return run(app, action, context);
}

}  // namespace

int taskd_main(int argc, char** argv) {
  exec::keep_memory_private();
  // Asked by a taskd about to execute this binary (kill -USR2): whether it
  // takes runs over as that taskd hands them.
  if (argc == 2 && std::string_view(argv[1]) == exec::handover_format_option) {
    fmt::print("{}\n", exec::handover_version);
    return 0;
  }
  // Parsed from a copy: the passwords in argv are hidden first.
  std::vector<std::string> words(argv, argv + argc);
  std::vector<char*> args;
  for (auto& word : words) args.push_back(word.data());
  args.push_back(nullptr);
  hide_passwords(argc, argv);
  if (auto add = named_command(argc, args.data())) {
    if (auto exit_code = run_alone(*add, argc, args.data())) return *exit_code;
  }
  return run_with_every_command(argc, args.data());
}

}  // namespace taskd::cli
