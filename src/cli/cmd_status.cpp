#include <filesystem>
#include <fmt/format.h>
#include <memory>

#include "cli/context.hpp"
#include "cli/format.hpp"
#include "cli/json.hpp"
#include "core/health.hpp"
#include "core/text.hpp"
#include "ops/status.hpp"

namespace taskd::cli {
namespace {

using core::Result;
using ops::WorkerSeen;

std::string describe_liveness(const WorkerSeen& worker, core::Time now) {
  switch (worker.liveness) {
    case sched::Liveness::gone: return "dead (the next recovery removes it)";
    case sched::Liveness::stale:
      return fmt::format("stale (last heartbeat {})", relative_time(worker.row->heartbeat_at, now));
    case sched::Liveness::unknown: return "? (another host)";
    case sched::Liveness::alive: break;
  }
  return "alive";
}

// A worker's clock offset to the database server's, in seconds: "+30.0s".
std::string clock_offset_text(const WorkerSeen& worker) {
  if (!worker.row) return "-";
  return fmt::format("{:+.1f}s", std::chrono::duration<double>(worker.row->clock_offset).count());
}

// How a worker keeps its runs' descendants, in a word: "cgroup" or "subreaper".
std::string containment_kind(const WorkerSeen& worker) {
  if (!worker.row || worker.row->containment.empty()) return "-";
  return worker.row->containment.substr(0, worker.row->containment.find(' '));
}

// "running" or "waiting for web1 (last seen 5m ago)".
std::string describe_host(const std::string& host, const ops::HostSeen& seen, core::Time now) {
  if (seen.alive) return "running";
  return fmt::format("waiting for {} ({})", host,
                     seen.last_seen ? "last seen " + relative_time(seen.last_seen, now) : "never seen");
}

void print_status(const ops::Status& status, core::Time now) {
  std::vector<std::vector<std::string>> rows;
  auto workers = ops::workers_of(status.one_machine, status.workers, status.running, now);
  for (const auto& worker : workers) {
    const auto& row = worker.row;
    rows.push_back({row ? row->role : "-", std::to_string(worker.identity.pid), worker.identity.host,
                    relative_time(row ? std::optional(row->started_at) : std::nullopt, now),
                    relative_time(row ? std::optional(row->heartbeat_at) : std::nullopt, now),
                    row ? std::to_string(row->concurrency) : "-", std::to_string(worker.runs),
                    clock_offset_text(worker), containment_kind(worker), describe_liveness(worker, now)});
  }
  fmt::print("Workers:\n");
  print_table({"ROLE", "PID", "HOST", "SINCE", "HEARTBEAT", "CONCURRENCY", "RUNS", "CLOCK", "CONTAIN", "STATE"}, rows);
  for (const auto& tick : status.ticks)
    fmt::print("Ticked by run-once on {} {}, {}\n", core::printable(tick.host), relative_time(tick.last_at, now),
               core::cadence_text(tick.every));
  rows.clear();
  for (const auto& run : status.running)
    rows.push_back({std::to_string(run.id), run.task, run.worker.host, std::to_string(run.worker.pid),
                    relative_time(run.started_at, now), relative_time(run.deadline_at, now)});
  fmt::print("\nRuns in flight:\n");
  print_table({"ID", "TASK", "HOST", "WORKER", "STARTED", "DEADLINE"}, rows);
  rows.clear();
  for (const auto& group : status.queue) rows.push_back({group.name.empty() ? "-" : group.name, std::to_string(group.count)});
  fmt::print("\nQueued runs:\n");
  print_table({"GROUP", "QUEUED"}, rows);
  rows.clear();
  if (!status.pinned.empty()) {
    for (const auto& host : status.pinned)
      rows.push_back({host.name, std::to_string(host.count), describe_host(host.name, ops::host_seen(workers, host.name), now)});
    fmt::print("\nQueued runs of tasks pinned to a host (--on-host):\n");
    print_table({"HOST", "QUEUED", "STATE"}, rows);
    rows.clear();
  }
  for (const auto& task : status.disabled) rows.push_back({task.name, task.reason});
  fmt::print("\nDisabled tasks:\n");
  print_table({"NAME", "REASON"}, rows);
  auto unshown = status.disabled_count - static_cast<std::int64_t>(status.disabled.size());
  if (unshown > 0) fmt::print("… and {} more (taskd list --state disabled)\n", unshown);
  if (status.malformed_count > 0) {
    rows.clear();
    for (const auto& task : status.malformed) rows.push_back({task.name, task.reason});
    fmt::print("\nMalformed tasks (not run; taskd edit sets what is wrong, taskd rm removes them):\n");
    print_table({"NAME", "PROBLEM"}, rows);
    auto more = status.malformed_count - static_cast<std::int64_t>(status.malformed.size());
    if (more > 0) fmt::print("… and {} more (taskd check names them all)\n", more);
  }
  fmt::print("\nHistory: {} runs, {} of output; database {}\n", status.history.runs,
             size_text(static_cast<std::uintmax_t>(status.history.output_bytes)), size_text(status.file_bytes));
}

Result<void> status(const Context& context) {
  auto db = TRY(context.open_db_to_read());
  auto read = TRY(ops::read_status(db));
  for (const auto& warning : read.warnings) fmt::print(stderr, "taskd: warning: {}\n", core::printable(warning));
  core::Time now = context.clock.now();
  if (context.json) print_json(ops::status_json(read, now));
  else print_status(read, now);
  return {};
}

}  // namespace

void add_status_command(CLI::App& app, Context& context, Action& action) {
  auto* command = app.add_subcommand("status", "Workers, runs in flight, queue depth per group, disabled tasks");
  command->callback([&context, &action] { action = [&context] { return status(context); }; });
}

}  // namespace taskd::cli
