#include <fmt/format.h>

#include "cli/context.hpp"
#include "store/overview.hpp"

namespace taskd::cli {
namespace {

using core::Result;

// Upper bounds of the lateness histogram, in seconds: the goal of a
// sleeping loop is tens of milliseconds, cron's granularity a minute.
const std::vector<double> lateness_bounds{0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};

// A Prometheus label value: backslash, quote and newline escaped.
std::string label(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out;
}

void print_header(std::string_view name, std::string_view type, std::string_view help) {
  fmt::print("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

Result<void> metrics(const Context& context) {
  auto db = context.open_db(store::IfMissing::use_empty);
  if (!db) return std::unexpected(db.error());
  auto statuses = store::runs_by_status(*db);
  if (!statuses) return std::unexpected(statuses.error());
  auto lateness = store::start_lateness(*db, lateness_bounds);
  if (!lateness) return std::unexpected(lateness.error());
  auto queue = store::queue_depth_by_group(*db);
  if (!queue) return std::unexpected(queue.error());

  print_header("taskd_runs", "gauge", "Runs in the history by status (the history keeps the newest runs of each task).");
  for (const auto& count : *statuses) fmt::print("taskd_runs{{status=\"{}\"}} {}\n", count.name, count.count);
  print_header("taskd_start_lateness_seconds", "histogram",
               "Started minus scheduled, of the scheduled runs in the history that started.");
  for (std::size_t i = 0; i < lateness->bounds.size(); ++i)
    fmt::print("taskd_start_lateness_seconds_bucket{{le=\"{}\"}} {}\n", lateness->bounds[i], lateness->at_most[i]);
  fmt::print("taskd_start_lateness_seconds_bucket{{le=\"+Inf\"}} {}\n", lateness->count);
  fmt::print("taskd_start_lateness_seconds_sum {}\n", lateness->sum_seconds);
  fmt::print("taskd_start_lateness_seconds_count {}\n", lateness->count);
  print_header("taskd_queue_depth", "gauge", "Queued runs by group.");
  for (const auto& group : *queue) fmt::print("taskd_queue_depth{{group=\"{}\"}} {}\n", label(group.name), group.count);
  return {};
}

}  // namespace

void add_metrics_command(CLI::App& app, Context& context, Action& action) {
  auto* command = app.add_subcommand("metrics", "Prometheus text format, for node_exporter's textfile collector");
  command->callback([&context, &action] { action = [&context] { return metrics(context); }; });
}

}  // namespace taskd::cli
