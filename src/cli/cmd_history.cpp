#include <cstdio>
#include <fmt/format.h>
#include <memory>

#include "cli/context.hpp"
#include "cli/format.hpp"
#include "cli/json.hpp"
#include "ops/runs.hpp"

namespace taskd::cli {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

struct HistoryOptions {
  std::string name;
  int limit = 20;
  std::int64_t run_id = 0;
  bool follow = false;
  std::vector<std::string> statuses;
  std::string trigger;
  std::string since;
  std::string until;
};

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
  for (const auto& name : options.statuses) {
    auto status = core::parse_run_status(name);
    if (!status) return fail(ErrorKind::usage, "history: --status: " + status.error().message);
    filter.statuses.push_back(*status);
  }
  if (!options.trigger.empty()) {
    auto trigger = core::parse_trigger(options.trigger);
    if (!trigger) return fail(ErrorKind::usage, "history: --trigger: " + trigger.error().message);
    filter.trigger = *trigger;
  }
  auto since = TRY(core::time_or_ago(options.since, "--since", now));
  auto until = TRY(core::time_or_ago(options.until, "--until", now));
  filter.since = since;
  filter.until = until;
  return filter;
}

std::vector<std::string> history_row(const store::RunRecord& run, const core::TimeStyle& style) {
  return {std::to_string(run.id),   run.task,         std::string(core::to_string(run.status)),
          core::show_time(run.scheduled_at, style), run_duration(run), run_outcome(run),
          usage_text(run.usage),    run.reason};
}

// Each run is printed as it is read, newest first.
Result<void> history(const Context& context, const HistoryOptions& options) {
  auto now = context.clock.now();
  auto filter = TRY(filter_of(options, now));
  auto db = TRY(context.open_db_to_read());
  auto walk = [&](const store::RunVisitor& visit) {
    return ops::for_each_run_of(db, options.name, filter, "history", visit);
  };
  if (context.json) return print_json_array(walk, write_run);
  auto style = context.time_style(now);
  TableWriter table(plain_columns({"ID", "TASK", "STATUS", "SCHEDULED", "DURATION", "EXIT", "CPU MEMORY", "REASON"}), {});
  TRY(walk([&](const store::RunRecord& run) -> Result<void> {
    table.add(plain_cells(history_row(run, style)));
    return {};
  }));
  table.finish();
  return {};
}

Result<void> logs(const Context& context, const HistoryOptions& options) {
  if (options.follow && context.json)
    return fail(ErrorKind::usage, "logs: --follow prints the output as it comes, not --json");
  auto db = TRY(context.open_db_to_read());
  if (options.follow) {
    return ops::follow_run_output(db, options.name, options.run_id, [](std::string_view bytes) {
      fmt::print("{}", bytes);
      std::fflush(stdout);
    });
  }
  auto shown = TRY(ops::run_output(db, options.name, options.run_id));
  if (context.json) {
    print_json(ops::run_output_json(shown));
    return {};
  }
  fmt::print("{}", shown.output);
  // An empty stdout alone reads as "nothing happened"; say whose run it was.
  if (shown.output.empty())
    fmt::print(stderr, "taskd: run {} of {} wrote no output ({}{}{})\n", shown.run.id, core::printable(shown.run.task),
               core::to_string(shown.run.status), shown.run.reason.empty() ? "" : ": ",
               core::printable(shown.run.reason));
  return {};
}

}  // namespace

void add_history_commands(CLI::App& app, Context& context, Action& action) {
  auto options = std::make_shared<HistoryOptions>();
  auto* history_command = app.add_subcommand("history", "Show the runs of one task or of all, newest first");
  history_command->add_option("name", options->name, "Task name (default: all tasks)");
  history_command->add_option("--limit", options->limit, "How many runs (default 20)");
  history_command->add_option("--status", options->statuses, "Only runs with one of these statuses (failed,lost,...)")
      ->delimiter(',');
  history_command->add_option("--trigger", options->trigger, "Only runs by this trigger: schedule, retry or manual");
  history_command->add_option("--since", options->since, "Only slots at or after this time (RFC 3339, or 2d ago)");
  history_command->add_option("--until", options->until, "Only slots before this time (RFC 3339, or 2d ago)");
  history_command->callback(
      [&context, &action, options] { action = [&context, options] { return history(context, *options); }; });

  auto* logs_command = app.add_subcommand("logs", "Show the captured output of a task's latest run");
  logs_command->add_option("name", options->name, "Task name")->required();
  logs_command->add_option("--run", options->run_id, "This run instead of the latest (an id from taskd history)");
  logs_command->add_flag("--follow,-f", options->follow, "Print the output as the run writes it, until it ends");
  logs_command->callback([&context, &action, options] { action = [&context, options] { return logs(context, *options); }; });
}

}  // namespace taskd::cli
