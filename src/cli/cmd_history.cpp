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
};

Result<core::Task> required_task(store::Database& db, const std::string& name, std::string_view verb) {
  auto task = store::find_task(db, name);
  if (!task) return std::unexpected(task.error());
  if (!*task) return fail(ErrorKind::bad_input, fmt::format("{}: no task named \"{}\" (see taskd list)", verb, name));
  return **task;
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

Result<void> history(const Context& context, const HistoryOptions& options) {
  if (options.limit < 1) return fail(ErrorKind::usage, "history: --limit must be at least 1");
  auto db = context.open_db(store::IfMissing::use_empty);
  if (!db) return std::unexpected(db.error());
  std::int64_t task_id = 0;
  if (!options.name.empty()) {
    auto task = required_task(*db, options.name, "history");
    if (!task) return std::unexpected(task.error());
    task_id = task->id;
  }
  auto runs = store::list_runs(*db, task_id, options.limit);
  if (!runs) return std::unexpected(runs.error());
  if (context.json) {
    Json out = Json::array();
    for (const auto& run : *runs) out.push_back(run_json(run));
    print_json(out);
    return {};
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& run : *runs) {
    rows.push_back({std::to_string(run.id), run.task, std::string(core::to_string(run.status)),
                    core::format_rfc3339(run.scheduled_at), run_duration(run), run_outcome(run), run.reason});
  }
  print_table({"ID", "TASK", "STATUS", "SCHEDULED", "DURATION", "EXIT", "REASON"}, rows);
  return {};
}

// The run whose output `logs` shows: the one asked for, or the task's latest
// run that started.
Result<store::RunRecord> run_to_show(store::Database& db, const core::Task& task, std::int64_t run_id) {
  if (run_id != 0) {
    auto run = store::find_run(db, run_id);
    if (!run) return std::unexpected(run.error());
    if (!*run || (*run)->task_id != task.id)
      return fail(ErrorKind::bad_input, fmt::format("logs: task \"{}\" has no run {}", task.definition.name, run_id));
    return **run;
  }
  auto runs = store::list_runs(db, task.id, 1000);
  if (!runs) return std::unexpected(runs.error());
  for (const auto& run : *runs) {
    if (run.started_at) return run;
  }
  return fail(ErrorKind::bad_input, fmt::format("logs: task \"{}\" has not run yet", task.definition.name));
}

Result<void> logs(const Context& context, const HistoryOptions& options) {
  auto db = context.open_db(store::IfMissing::use_empty);
  if (!db) return std::unexpected(db.error());
  auto task = required_task(*db, options.name, "logs");
  if (!task) return std::unexpected(task.error());
  auto run = run_to_show(*db, *task, options.run_id);
  if (!run) return std::unexpected(run.error());
  auto output = store::run_output(*db, run->id);
  if (!output) return std::unexpected(output.error());
  if (context.json) {
    Json out = run_json(*run);
    out["output"] = *output;
    print_json(out);
    return {};
  }
  if (run->output_truncated) fmt::print("[taskd: earlier output was discarded; the last {} bytes follow]\n", output->size());
  fmt::print("{}", *output);
  return {};
}

}  // namespace

void add_history_commands(CLI::App& app, Context& context, Action& action) {
  auto options = std::make_shared<HistoryOptions>();
  auto* history_command = app.add_subcommand("history", "Show the runs of one task or of all, newest first");
  history_command->add_option("name", options->name, "Task name (default: all tasks)");
  history_command->add_option("--limit", options->limit, "How many runs (default 20)");
  history_command->callback(
      [&context, &action, options] { action = [&context, options] { return history(context, *options); }; });

  auto* logs_command = app.add_subcommand("logs", "Show the captured output of a task's latest run");
  logs_command->add_option("name", options->name, "Task name")->required();
  logs_command->add_option("--run", options->run_id, "This run instead of the latest (an id from taskd history)");
  logs_command->callback([&context, &action, options] { action = [&context, options] { return logs(context, *options); }; });
}

}  // namespace taskd::cli
