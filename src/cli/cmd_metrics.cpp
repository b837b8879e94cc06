// `taskd metrics`: the Prometheus text format, from counters the schema's
// triggers keep, counts over small indexes and the tasks' rows; it reads no
// history, so a cron job may run it every minute whatever the history holds.
#include <cstdio>

#include "cli/context.hpp"
#include "ops/metrics.hpp"

namespace taskd::cli {
namespace {

core::Result<void> metrics(const Context& context) {
  auto db = TRY(context.open_db_to_read());
  return ops::write_metrics_text(db, [](std::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); });
}

}  // namespace

void add_metrics_command(CLI::App& app, Context& context, Action& action) {
  auto* command = app.add_subcommand("metrics", "Prometheus text format, for node_exporter's textfile collector");
  command->callback([&context, &action] { action = [&context] { return metrics(context); }; });
}

}  // namespace taskd::cli
