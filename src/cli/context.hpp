#pragma once
// What every command shares: the global options, the clock, and the way to
// open the database.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/duration.hpp"
#include "core/error.hpp"
#include "core/task.hpp"
#include "core/zone.hpp"
#include "exec/cgroup.hpp"
#include "sched/clock.hpp"
#include "sched/retention.hpp"
#include "store/database.hpp"
#include "store/tasks.hpp"

namespace taskd::cli {

// TASKD_CLOCK: "host" keeps this host's clock on a server; unset, empty or
// "server" (and anything else, which open_db refuses) the server's.
sched::ClockSource clock_source();

struct Context {
  std::string db_option;  // --db
  std::filesystem::path state_dir;  // --state-dir
  bool json = false;      // --json
  bool utc = false;       // --utc
  // The command line as given (passwords too): `taskd run` executes it again on SIGUSR2.
  std::vector<std::string> command_line;
  // The exit code of a command that succeeded: 0, but check's verdicts.
  int exit_code = 0;
  // Set by a command whose errors, usage errors too, take an exit code of
  // its own (check: 3 UNKNOWN, as monitoring plugins do): it says what went
  // wrong its own way and returns the code.
  std::function<int(const core::Error&)> on_error;
  // The server's clock on a server store, unless TASKD_CLOCK=host.
  sched::SystemClock clock{clock_source()};

  std::filesystem::path db_path() const;
  core::Result<store::Database> open_db(store::IfMissing if_missing,
                                        store::OlderSchema older_schema = store::OlderSchema::migrate) const;
  // As every command that only reads opens it: a missing file stands in as
  // an empty database, and one of an older schema is refused (never
  // migrated: `taskd migrate` does that).
  core::Result<store::Database> open_db_to_read() const;
  // A database that is not there is unavailable, not an empty one that is
  // well: a check pointed at the wrong file must not pass.
  core::Result<store::Database> open_existing_db(store::OlderSchema older_schema = store::OlderSchema::refuse) const;
  // As every command that runs or kills processes opens it: created when
  // missing, refused when someone else could write or swap it.
  core::Result<store::Database> open_db_to_run() const;
  // How human output shows times at `now`: in UTC with --utc or --json,
  // else in the local zone ($TZ, else the system's; UTC where TZ names none).
  core::TimeStyle time_style(core::Time now) const;
};

// The work a parsed command will do; set by the command's CLI11 callback and
// run after parsing, so its errors map to exit codes in one place.
using Action = std::function<core::Result<void>()>;

// Refuses an empty path, which would silently mean the option's default.
CLI::Validator non_empty_path();

// --db > $TASKD_DB > $XDG_STATE_HOME/taskd/taskd.db > ~/.local/state/taskd/taskd.db;
// a file's path, or a PostgreSQL URI (postgresql://...)
std::filesystem::path default_db_path(const std::string& db_option);

void add_add_command(CLI::App& app, Context& context, Action& action);
void add_task_commands(CLI::App& app, Context& context, Action& action);
void add_history_commands(CLI::App& app, Context& context, Action& action);
void add_run_once_command(CLI::App& app, Context& context, Action& action);
void add_run_commands(CLI::App& app, Context& context, Action& action);  // tick, work, run
void add_status_command(CLI::App& app, Context& context, Action& action);
void add_metrics_command(CLI::App& app, Context& context, Action& action);
void add_check_command(CLI::App& app, Context& context, Action& action);
void add_preview_command(CLI::App& app, Context& context, Action& action);
void add_forecast_command(CLI::App& app, Context& context, Action& action);
void add_trigger_command(CLI::App& app, Context& context, Action& action);
void add_backfill_command(CLI::App& app, Context& context, Action& action);
void add_explain_command(CLI::App& app, Context& context, Action& action);
void add_group_command(CLI::App& app, Context& context, Action& action);
void add_calendar_command(CLI::App& app, Context& context, Action& action);
void add_defaults_command(CLI::App& app, Context& context, Action& action);
void add_edit_command(CLI::App& app, Context& context, Action& action);
void add_import_command(CLI::App& app, Context& context, Action& action);
void add_apply_command(CLI::App& app, Context& context, Action& action);
void add_export_command(CLI::App& app, Context& context, Action& action);
void add_copy_db_command(CLI::App& app, Context& context, Action& action);
void add_migrate_command(CLI::App& app, Context& context, Action& action);
// Hidden: `completion bash` and `__names`; add it last, it reads the others.
void add_completion_commands(CLI::App& app, Context& context, Action& action);

// --keep-days N of the commands that tick: 0 (not given) keeps every run
// that --keep-runs keeps.
void add_keep_days_option(CLI::App& command, int& keep_days);
core::Result<std::optional<sched::Retention>> retention_of(int keep_days);

// --host-id ID of the commands that run tasks: this taskd's name on a
// shared database (default: the hostname). host_id_of checks it; empty
// stays empty (the hostname).
void add_host_id_option(CLI::App& command, std::string& host_id);
core::Result<std::string> host_id_of(const std::string& host_id);

// --lease DUR of the commands that run tasks: on a server, how long a
// run's lease lasts past each renewal (default: 30s). lease_of checks it
// against `db`: a SQLite file has no renewed leases, and refuses it.
void add_lease_option(CLI::App& command, std::string& lease);
// --containment of run, work and run-once: how a run's descendants are kept
// with it (taskd(1), CONTAINMENT), as containment_of reads it.
void add_containment_option(CLI::App& command, std::string& containment);
core::Result<exec::Containment> containment_of(const std::string& containment);
core::Result<std::optional<core::Millis>> lease_of(const std::string& lease, const store::Database& db);

// --dry-run of import-crontab: show what would be done, write nothing.
enum class DryRun { no, yes };

// Parses an optional duration option; `option` names it in the error.
core::Result<std::optional<core::Seconds>> optional_duration(const std::string& text, std::string_view option);

}  // namespace taskd::cli
