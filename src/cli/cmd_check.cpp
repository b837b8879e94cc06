// `taskd check`: a monitoring plugin (Nagios, Icinga, Sensu). One summary
// line with performance data after `|`, a line per problem, and the verdict
// as the exit code: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (the database
// could not be read, or the command line is wrong). It writes nothing.
#include <fmt/format.h>

#include <filesystem>

#include "cli/context.hpp"
#include "cli/json.hpp"
#include "core/health.hpp"
#include "core/text.hpp"
#include "store/overview.hpp"
#include "store/tasks.hpp"
#include "store/workers.hpp"

namespace taskd::cli {
namespace {

using core::Result;
using core::Verdict;

struct CheckOptions {
  std::string late;  // --late DUR; empty: lateness is not judged
};

Json problem_json(const core::HealthProblem& problem) {
  return {{"status", core::to_string(problem.verdict)},
          {"kind", core::to_string(problem.kind)},
          {"task", problem.task.empty() ? Json(nullptr) : Json(problem.task)},
          {"detail", problem.detail},
          {"since", time_json(problem.since)},
          {"for", problem.since ? seconds_json(problem.age) : Json(nullptr)},
          {"limit", seconds_json(problem.limit)}};
}

// The verdict with what led to it; `late` as check was given it.
Json check_report_json(const core::CheckReport& report, const core::SchedulerFacts& scheduler,
                 std::optional<core::Millis> late) {
  Json problems = Json::array();
  for (const auto& problem : report.problems) problems.push_back(problem_json(problem));
  const auto& c = report.counts;
  return {
      {"status", core::to_string(report.verdict)},
      {"exit_code", core::exit_code(report.verdict)},
      {"summary", core::summary_line(report)},
      {"counts", {{"ok", c.ok}, {"warning", c.warning}, {"critical", c.critical}, {"paused", c.paused}}},
      {"late", seconds_json(late)},
      {"scheduler", {{"heartbeat_at", time_json(scheduler.newest_heartbeat)}, {"due_tasks", scheduler.overdue_tasks}}},
      {"problems", problems}};
}

// UNKNOWN: what could not be known, as the plugin's one line (or as JSON).
int unknown(const core::Error& error, const Context& context) {
  auto summary = fmt::format("TASKD {} - {}", core::to_string(Verdict::unknown), error.message);
  if (context.json) {
    print_json({{"status", core::to_string(Verdict::unknown)},
                {"exit_code", core::exit_code(Verdict::unknown)},
                {"summary", summary}});
  } else {
    fmt::print("{}\n", core::printable(summary));
  }
  return core::exit_code(Verdict::unknown);
}

// A database that is not there is UNKNOWN, not an empty one that is well: a
// check pointed at the wrong file must not pass.
Result<store::Database> open_existing(const Context& context) {
  auto path = context.db_path();
  if (!store::is_server_uri(path.string()) && !std::filesystem::exists(path))
    return core::fail(core::ErrorKind::unavailable, fmt::format("no database at {}", path.string()));
  return context.open_db(store::IfMissing::use_empty);
}

Result<core::SchedulerFacts> read_scheduler(store::Database& db, core::Time now) {
  auto heartbeat = TRY(store::newest_heartbeat(db, "run"));
  auto overdue = TRY(store::count_due_tasks(db, now - core::scheduler_silence));
  return core::SchedulerFacts{heartbeat, overdue};
}

// The plugin's lines: the summary, then one per problem; or the JSON.
void print_check_report(const core::CheckReport& report, const core::SchedulerFacts& scheduler,
                  std::optional<core::Millis> late, const Context& context) {
  if (context.json) return print_json(check_report_json(report, scheduler, late));
  fmt::print("{}\n", core::printable(core::summary_line(report)));
  for (const auto& problem : report.problems) fmt::print("{}\n", core::printable(core::detail_line(problem)));
}

Result<void> check(Context& context, const CheckOptions& options) {
  auto late = TRY(optional_duration(options.late, "--late"));
  auto db = TRY(open_existing(context));
  core::Time now = context.clock.now();
  auto scheduler = TRY(read_scheduler(db, now));
  core::CheckReportBuilder builder(scheduler, now, late);
  TRY(store::for_each_task_facts(db, [&builder](const core::TaskFacts& task) { builder.add(task); }));
  auto report = std::move(builder).finish();
  print_check_report(report, scheduler, late, context);
  context.exit_code = core::exit_code(report.verdict);
  return {};
}

}  // namespace

void add_check_command(CLI::App& app, Context& context, Action& action) {
  auto options = std::make_shared<CheckOptions>();
  auto* command = app.add_subcommand(
      "check", "Monitoring plugin: exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN, with a summary line and details");
  command->add_option("--late", options->late, "WARNING when a task's latest planned run started later than this");
  // From the moment the command is named, its errors are UNKNOWN: 2 would
  // read as CRITICAL.
  command->preparse_callback([&context](std::size_t) {
    context.on_error = [&context](const core::Error& error) { return unknown(error, context); };
  });
  command->callback(
      [&context, &action, options] { action = [&context, options] { return check(context, *options); }; });
}

}  // namespace taskd::cli
