#include <fmt/format.h>
#include <memory>

#include "cli/context.hpp"
#include "cli/format.hpp"
#include "cli/json.hpp"
#include "store/runs.hpp"
#include "store/tasks.hpp"

namespace taskd::cli {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

struct HistoryOptions {
  std::string name;
  int limit = 20;
  std::int64_t run_id = 0;
  std::string status;
  std::string trigger;
  std::string since;
  std::string until;
};

// The task named `name`: what can be read of it (its id and name at least),
// for the runs in history of a malformed row are shown as any others.
Result<core::Task> required_task(store::Database& db, const std::string& name, std::string_view verb) {
  auto task = TRY(store::find_stored_task(db, name));
  if (!task) return fail(ErrorKind::bad_input, fmt::format("{}: no task named \"{}\" (see taskd list)", verb, name));
  return store::readable(*task);
}

std::string run_outcome(const store::RunRecord& run) {
  if (run.exit_code) return fmt::format("exit {}", *run.exit_code);
  if (run.signal) return fmt::format("signal {}", *run.signal);
  return "-";
}

std::string run_duration(const store::RunRecord& run) {
  if (!run.started_at || !run.finished_at) return "-";
  return fmt::format("{:.3f}s", std::chrono::duration<double>(*run.finished_at - *run.started_at).count());
}

// The filter the options describe (but the task, which needs the database).
Result<store::RunFilter> filter_of(const HistoryOptions& options, core::Time now) {
  if (options.limit < 1) return fail(ErrorKind::usage, "history: --limit must be at least 1");
  store::RunFilter filter{.limit = options.limit};
  if (!options.status.empty()) {
    auto status = core::parse_run_status(options.status);
    if (!status) return fail(ErrorKind::usage, "history: --status: " + status.error().message);
    filter.status = *status;
  }
  if (!options.trigger.empty()) {
    auto trigger = core::parse_trigger(options.trigger);
    if (!trigger) return fail(ErrorKind::usage, "history: --trigger: " + trigger.error().message);
    filter.trigger = *trigger;
  }
  auto since = TRY(optional_time(options.since, "--since", now));
  auto until = TRY(optional_time(options.until, "--until", now));
  filter.since = since;
  filter.until = until;
  return filter;
}

std::vector<std::string> history_row(const store::RunRecord& run) {
  return {std::to_string(run.id),   run.task,         std::string(core::to_string(run.status)),
          core::format_rfc3339(run.scheduled_at), run_duration(run), run_outcome(run),
          usage_text(run.usage),    run.reason};
}

// Each run is printed as it is read, newest first.
Result<void> history(const Context& context, const HistoryOptions& options) {
  auto filter = TRY(filter_of(options, context.clock.now()));
  auto db = TRY(context.open_db(store::IfMissing::use_empty));
  if (!options.name.empty()) {
    auto task = TRY(required_task(db, options.name, "history"));
    filter.task_id = task.id;
  }
  if (context.json)
    return print_json_array([&](const store::RunVisitor& visit) { return store::for_each_run(db, filter, visit); },
                            run_json);
  TableWriter table(plain_columns({"ID", "TASK", "STATUS", "SCHEDULED", "DURATION", "EXIT", "CPU MEMORY", "REASON"}), {});
  TRY(store::for_each_run(db, filter, [&](const store::RunRecord& run) -> Result<void> {
    table.add(plain_cells(history_row(run)));
    return {};
  }));
  table.finish();
  return {};
}

// The run whose output `logs` shows: the one asked for, or the task's latest
// run that started.
Result<store::RunRecord> run_to_show(store::Database& db, const core::Task& task, std::int64_t run_id) {
  if (run_id != 0) {
    auto run = TRY(store::find_run(db, run_id));
    if (!run || run->task_id != task.id)
      return fail(ErrorKind::bad_input, fmt::format("logs: task \"{}\" has no run {}", task.definition.name, run_id));
    return *run;
  }
  auto runs = TRY(store::list_runs(db, task.id, 1000));
  for (const auto& run : runs) {
    if (run.started_at) return run;
  }
  return fail(ErrorKind::bad_input, fmt::format("logs: task \"{}\" has not run yet", task.definition.name));
}

Result<void> logs(const Context& context, const HistoryOptions& options) {
  auto db = TRY(context.open_db(store::IfMissing::use_empty));
  auto task = TRY(required_task(db, options.name, "logs"));
  auto run = TRY(run_to_show(db, task, options.run_id));
  auto output = TRY(store::run_output(db, run.id));
  if (context.json) {
    Json out = run_json(run);
    out["output"] = output;
    print_json(out);
    return {};
  }
  if (run.output_truncated) fmt::print("[taskd: earlier output was discarded; the last {} bytes follow]\n", output.size());
  fmt::print("{}", output);
  return {};
}

}  // namespace

void add_history_commands(CLI::App& app, Context& context, Action& action) {
  auto options = std::make_shared<HistoryOptions>();
  auto* history_command = app.add_subcommand("history", "Show the runs of one task or of all, newest first");
  history_command->add_option("name", options->name, "Task name (default: all tasks)");
  history_command->add_option("--limit", options->limit, "How many runs (default 20)");
  history_command->add_option("--status", options->status, "Only runs with this status (failed, lost, ...)");
  history_command->add_option("--trigger", options->trigger, "Only runs by this trigger: schedule, retry or manual");
  history_command->add_option("--since", options->since, "Only slots at or after this time (RFC 3339, or 2d ago)");
  history_command->add_option("--until", options->until, "Only slots before this time (RFC 3339, or 2d ago)");
  history_command->callback(
      [&context, &action, options] { action = [&context, options] { return history(context, *options); }; });

  auto* logs_command = app.add_subcommand("logs", "Show the captured output of a task's latest run");
  logs_command->add_option("name", options->name, "Task name")->required();
  logs_command->add_option("--run", options->run_id, "This run instead of the latest (an id from taskd history)");
  logs_command->callback([&context, &action, options] { action = [&context, options] { return logs(context, *options); }; });
}

}  // namespace taskd::cli
