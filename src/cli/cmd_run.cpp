#include <fmt/format.h>

#include <cstdlib>
#include <memory>
#include <thread>

#include "cli/context.hpp"
#include "exec/handover.hpp"
#include "exec/reexec.hpp"
#include "exec/signal_watch.hpp"
#include "sched/delivery.hpp"
#include "sched/log.hpp"
#include "sched/loop.hpp"
#include "web/command.hpp"

namespace taskd::cli {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

// Exit status after a second SIGINT, as a shell reports a process killed by it.
constexpr int aborted_exit_code = 130;

struct LogOptions {
  std::string file;
  std::string level = "info";
};

struct TickOptions {
  LogOptions log;
  int keep_days = 0;
  std::string host_id;
};

struct LoopCommandOptions {
  LogOptions log;
  int keep_days = 0;
  int concurrency = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string tick = "30s";
  std::string drain = "60s";
  std::string host_id;
  std::string lease;
  std::string containment;
  web::WebOptions board;  // `run --web`; none when its address is empty
};

void add_log_options(CLI::App* command, LogOptions& options) {
  command->add_option("--log-file", options.file, "Append the event log to PATH (default: stderr); SIGHUP reopens it")
      ->check(non_empty_path());
  command->add_option("--log-level", options.level, "debug, info, warn or error (default: info)");
}

Result<sched::Logger> open_log(const Context& context, const LogOptions& options) {
  auto level = TRY(sched::parse_log_level(options.level));
  return sched::Logger::open(options.file, level, context.clock);
}

Result<void> tick(const Context& context, const TickOptions& options) {
  auto log = TRY(open_log(context, options.log));
  auto retention = TRY(retention_of(options.keep_days));
  auto host_id = TRY(host_id_of(options.host_id));
  auto db = TRY(context.open_db_to_run());
  return sched::tick_once(db, context.clock, log, retention, host_id);
}

// The board beside the loop; none when not asked for, or when a new image
// taking runs over cannot serve it (logged): those runs matter more.
Result<std::unique_ptr<web::ServedBoard>> serve_board(const Context& context, const web::WebOptions& options,
                                                      bool handed, sched::Logger& log) {
  if (options.listen.empty()) return nullptr;
  auto board = web::ServedBoard::start(context, options);
  if (board || !handed) return board;
  log.log(sched::LogLevel::error, "web.failed",
          {{"error", board.error().message}, {"note", "the runs handed over go on; the board is not served"}});
  return nullptr;
}

// The loop, taking over `handed` (see sched::run_loop), which it resets
// once the loop is there to take it.
Result<void> serve(const Context& context, const LoopCommandOptions& options, sched::Role role,
                   std::optional<exec::Handover>& handed) {
  std::string_view name = role == sched::Role::work ? "work" : "run";
  if (options.concurrency < 1) return fail(ErrorKind::usage, fmt::format("{}: --concurrency must be at least 1", name));
  auto tick_bound = TRY(optional_duration(options.tick, "--tick"));
  if (!tick_bound || *tick_bound <= core::Seconds{0})
    return fail(ErrorKind::usage, fmt::format("{}: --tick must be a positive duration", name));
  auto drain = TRY(optional_duration(options.drain, "--drain"));
  if (!drain) return fail(ErrorKind::usage, fmt::format("{}: --drain must be a duration (0: no drain)", name));
  const char* crash_at = std::getenv("TASKD_CRASH_AT");
  auto crash = TRY(sched::parse_crash_switch(crash_at ? crash_at : ""));
  auto retention = TRY(retention_of(options.keep_days));
  auto host_id = TRY(host_id_of(options.host_id));
  auto containment = TRY(containment_of(options.containment));
  if (!options.board.listen.empty() && !handed) TRY(web::check_board_options(options.board));
  auto log = TRY(open_log(context, options.log));
  auto db = TRY(context.open_db_to_run());
  auto board = TRY(serve_board(context, options.board, handed.has_value(), log));
  auto lease = TRY(lease_of(options.lease, db));
  sched::LoopOptions loop_options;
  loop_options.worker.lease = lease;
  loop_options.retention = retention;
  loop_options.worker.crash = crash;
  loop_options.role = role;
  loop_options.tick = *tick_bound;
  loop_options.drain = *drain;
  loop_options.worker.concurrency = options.concurrency;
  loop_options.worker.host_id = host_id;
  loop_options.image = exec::this_image(context.command_line);
  loop_options.on_start = [&](const std::string& contained) {
    log.log(sched::LogLevel::info, "loop.started",
            {{"command", std::string(name)},
             {"version", TASKD_VERSION},
             {"db", db.name()},
             {"concurrency", std::to_string(options.concurrency)},
             {"tick", core::format_duration(*tick_bound)},
             {"drain", core::format_duration(*drain)},
             {"containment", contained}});
  };
  // From loop.started on, which tells a service manager or a test that the
  // loop is there, a signal is the loop's to read, never the default action.
  TRY(exec::SignalWatch::block());
  // Another life of the loop follows only when the binary, which cannot take
  // runs over, could not be executed once they had finished.
  while (true) {
    auto ended = TRY(sched::run_loop(db, context.clock, log, loop_options, containment, handed));
    if (ended == sched::LoopEnd::aborted) {
      board.reset();  // its threads stopped before exit() destroys what they read
      std::exit(aborted_exit_code);
    }
    if (ended == sched::LoopEnd::stopped) break;
    log.log(sched::LogLevel::info, "loop.executing",
            {{"command", std::string(name)}, {"path", loop_options.image->path}, {"running", "0"}});
    auto failed = exec::execute_again(*loop_options.image, std::nullopt, {});
    log.log(sched::LogLevel::error, "loop.upgrade_failed",
            {{"error", failed.message}, {"note", "this binary goes on running"}});
  }
  sched::drain_alerts(sched::alert_drain_limit);
  log.log(sched::LogLevel::info, "loop.stopped", {{"command", std::string(name)}});
  return {};
}

// A new image that cannot start ends the runs handed over to it as a
// shutdown does, recording them when it can open the database, logging to
// stderr when it cannot open its log.
void refuse_handover(const Context& context, const LoopCommandOptions& options, const exec::Handover& handed,
                     const core::Error& why) {
  auto opened = open_log(context, options.log);
  auto log = opened ? std::move(opened) : sched::Logger::open("", sched::LogLevel::info, context.clock);
  if (!log) return exec::close_inherited(handed.inherited, {});
  auto db = context.open_db_to_run();
  sched::refuse_handover(db ? &*db : nullptr, context.clock, *log, handed, why);
}

Result<void> loop(const Context& context, const LoopCommandOptions& options, sched::Role role) {
  // First of all: the variable of an upgrade's hand-over reaches no child.
  auto handed = exec::take_handover();
  auto served = serve(context, options, role, handed);
  if (!served && handed) refuse_handover(context, options, *handed, served.error());
  return served;
}

void add_loop_command(CLI::App& app, Context& context, Action& action, sched::Role role) {
  auto options = std::make_shared<LoopCommandOptions>();
  auto* command = role == sched::Role::work
                      ? app.add_subcommand("work", "Claim and run queued runs, as a long-running worker")
                      : app.add_subcommand("run", "The scheduler loop: queue what is due and run it, until stopped");
  command->add_option("--concurrency", options->concurrency, "Runs at once (default: the number of cores)");
  command->add_option("--tick", options->tick, "Look at the database at least this often (default: 30s)");
  command->add_option("--drain", options->drain,
                      "On SIGTERM, claim nothing new and let the runs in flight finish for up to this long; those "
                      "still running then are ended and run again at the next start (default: 60s; 0: end them at "
                      "once)");
  add_log_options(command, options->log);
  add_host_id_option(*command, options->host_id);
  add_lease_option(*command, options->lease);
  add_containment_option(*command, options->containment);
  if (role == sched::Role::tick_and_work) {
    add_keep_days_option(*command, options->keep_days);
    web::add_board_options(*command, options->board);
  }
  command->callback([&context, &action, options, role] {
    action = [&context, options, role] { return loop(context, *options, role); };
  });
}

}  // namespace

void add_run_commands(CLI::App& app, Context& context, Action& action) {
  auto tick_options = std::make_shared<TickOptions>();
  auto* tick_command = app.add_subcommand("tick", "Recover lost runs and queue what is due, then exit");
  add_log_options(tick_command, tick_options->log);
  add_keep_days_option(*tick_command, tick_options->keep_days);
  add_host_id_option(*tick_command, tick_options->host_id);
  tick_command->callback([&context, &action, tick_options] {
    action = [&context, tick_options] { return tick(context, *tick_options); };
  });
  add_loop_command(app, context, action, sched::Role::work);
  add_loop_command(app, context, action, sched::Role::tick_and_work);
}

}  // namespace taskd::cli
