// `taskd check`: a monitoring plugin (Nagios, Icinga, Sensu). One summary
// line with performance data after `|`, a line per problem, and the verdict
// as the exit code: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (the database
// could not be read, or the command line is wrong). It writes nothing.
#include <fmt/format.h>

#include "cli/context.hpp"
#include "cli/json.hpp"
#include "core/text.hpp"
#include "ops/check.hpp"

namespace taskd::cli {
namespace {

using core::Result;
using core::Verdict;

struct CheckOptions {
  std::string late;  // --late DUR; empty: lateness is not judged
  store::TaskFilter selection;  // the tasks judged: names, --group, --owner
};

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

// The plugin's lines: the summary, then one per problem; or the JSON.
void print_check_report(const ops::Checked& checked, const Context& context) {
  if (context.json) return print_json(ops::checked_json(checked));
  const auto& report = checked.report;
  fmt::print("{}\n", core::printable(core::summary_line(report)));
  for (const auto& problem : report.problems) fmt::print("{}\n", core::printable(core::detail_line(problem)));
}

Result<void> check(Context& context, const CheckOptions& options) {
  auto late = TRY(optional_duration(options.late, "--late"));
  auto db = TRY(context.open_existing_db());
  // A plugin's lines are read on a monitoring server, whose clock may be
  // another zone's: a local time always carries its offset.
  auto style = context.time_style(context.clock.now());
  style.always_offset = true;
  auto checked = TRY(ops::check_tasks(db, {.selection = options.selection, .late = late, .style = style}, context.clock));
  print_check_report(checked, context);
  context.exit_code = core::exit_code(checked.report.verdict);
  return {};
}

}  // namespace

void add_check_command(CLI::App& app, Context& context, Action& action) {
  auto options = std::make_shared<CheckOptions>();
  auto* command = app.add_subcommand(
      "check", "Monitoring plugin: exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN, with a summary line and details");
  command->add_option("names", options->selection.names, "Judge only these tasks (default: all)");
  command->add_option("--group", options->selection.group, "Judge only the tasks of this group");
  command->add_option("--owner", options->selection.owner, "Judge only the tasks of this owner");
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
