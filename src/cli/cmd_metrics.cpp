// `taskd metrics`: the Prometheus text format, from counters the schema's
// triggers keep and counts over small indexes; it reads no history, so a
// cron job may run it every minute whatever the history holds.
#include <fmt/format.h>

#include "cli/context.hpp"
#include "ops/metrics.hpp"

namespace taskd::cli {
namespace {

using core::Result;

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

void print_counts(std::string_view name, std::string_view label_name, const std::vector<store::NamedCount>& counts) {
  for (const auto& count : counts) fmt::print("{}{{{}=\"{}\"}} {}\n", name, label_name, label(count.name), count.count);
}

void print_lateness(const store::LatenessHistogram& lateness) {
  print_header("taskd_start_lateness_seconds", "histogram",
               "Started minus scheduled, of the scheduled runs that started and ended.");
  for (std::size_t i = 0; i < lateness.bounds.size(); ++i)
    fmt::print("taskd_start_lateness_seconds_bucket{{le=\"{}\"}} {}\n", lateness.bounds[i], lateness.at_most[i]);
  fmt::print("taskd_start_lateness_seconds_bucket{{le=\"+Inf\"}} {}\n", lateness.count);
  fmt::print("taskd_start_lateness_seconds_sum {}\n", lateness.sum_seconds);
  fmt::print("taskd_start_lateness_seconds_count {}\n", lateness.count);
}

double unix_seconds(core::Time time) { return static_cast<double>(core::to_unix_ms(time)) / 1000.0; }

void print_last_successes(const std::vector<store::NamedTime>& successes) {
  print_header("taskd_task_last_success_timestamp_seconds", "gauge",
               "When the task's last successful run ended (a task that never succeeded has no sample).");
  for (const auto& success : successes)
    fmt::print("taskd_task_last_success_timestamp_seconds{{task=\"{}\"}} {:.3f}\n", label(success.name),
               unix_seconds(success.time));
}

void print_heartbeat(const std::optional<core::Time>& heartbeat) {
  print_header("taskd_scheduler_heartbeat_timestamp_seconds", "gauge",
               "The newest heartbeat of a scheduler on the database (taskd run, or a tick of taskd run-once); 0 while "
               "none was seen.");
  fmt::print("taskd_scheduler_heartbeat_timestamp_seconds {:.3f}\n", heartbeat ? unix_seconds(*heartbeat) : 0.0);
}

Result<void> metrics(const Context& context) {
  auto db = TRY(context.open_db_to_read());
  auto read = TRY(ops::read_metrics(db));

  print_header("taskd_runs_total", "counter", "Runs that ended, by status (pruning the history does not lower it).");
  print_counts("taskd_runs_total", "status", read.ended);
  print_header("taskd_runs_in_flight", "gauge", "Runs queued and running now.");
  print_counts("taskd_runs_in_flight", "status", read.in_flight);
  print_lateness(read.lateness);
  print_header("taskd_queue_depth", "gauge", "Queued runs by group.");
  print_counts("taskd_queue_depth", "group", read.queue);
  print_header("taskd_tasks", "gauge", "Tasks by state (as taskd list --state selects them).");
  print_counts("taskd_tasks", "state", read.tasks);
  print_header("taskd_history_runs", "gauge", "Ended runs the history holds now.");
  fmt::print("taskd_history_runs {}\n", read.history.runs);
  print_header("taskd_history_output_bytes", "gauge", "Bytes of captured output the history holds now.");
  fmt::print("taskd_history_output_bytes {}\n", read.history.output_bytes);
  print_last_successes(read.successes);
  print_heartbeat(read.heartbeat);
  return {};
}

}  // namespace

void add_metrics_command(CLI::App& app, Context& context, Action& action) {
  auto* command = app.add_subcommand("metrics", "Prometheus text format, for node_exporter's textfile collector");
  command->callback([&context, &action] { action = [&context] { return metrics(context); }; });
}

}  // namespace taskd::cli
