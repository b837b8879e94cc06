#include <fmt/format.h>
#include <map>
#include <memory>
#include <tuple>

#include "cli/context.hpp"
#include "cli/format.hpp"
#include "cli/json.hpp"
#include "exec/process_identity.hpp"
#include "sched/recovery.hpp"
#include "store/overview.hpp"
#include "store/runs.hpp"

namespace taskd::cli {
namespace {

using core::Result;

// A worker seen through the runs it executes (idle workers leave no trace
// in the database).
struct WorkerSeen {
  store::WorkerIdentity identity;
  int runs = 0;
  std::string alive;  // "yes", "no" (recovery will record its runs lost), "?" (another host)
};

std::vector<WorkerSeen> workers_of(const std::vector<store::InFlightRun>& runs) {
  std::map<std::tuple<std::string, pid_t, std::int64_t>, WorkerSeen> workers;
  std::string host = exec::host_name();
  sched::SystemProcessTable processes;
  for (const auto& run : runs) {
    auto& seen = workers[{run.worker.host, run.worker.pid, run.worker.started_at}];
    seen.identity = run.worker;
    seen.runs += 1;
    bool here = run.worker.host == host;
    seen.alive = !here ? "?" : processes.is_running(run.worker.pid, run.worker.started_at) ? "yes" : "no";
  }
  std::vector<WorkerSeen> out;
  for (auto& [key, seen] : workers) out.push_back(std::move(seen));
  return out;
}

struct Status {
  std::vector<store::InFlightRun> running;
  std::vector<store::NamedCount> queue;
  std::vector<store::DisabledTask> disabled;
};

Result<Status> read_status(store::Database& db) {
  Status status;
  auto running = store::running_runs(db);
  if (!running) return std::unexpected(running.error());
  auto queue = store::queue_depth_by_group(db);
  if (!queue) return std::unexpected(queue.error());
  auto disabled = store::disabled_tasks(db);
  if (!disabled) return std::unexpected(disabled.error());
  return Status{std::move(*running), std::move(*queue), std::move(*disabled)};
}

Json status_json(const Status& status, core::Time now) {
  Json out;
  out["workers"] = Json::array();
  for (const auto& worker : workers_of(status.running))
    out["workers"].push_back({{"host", worker.identity.host}, {"pid", worker.identity.pid}, {"runs", worker.runs},
                              {"alive", worker.alive == "?" ? Json(nullptr) : Json(worker.alive == "yes")}});
  out["running"] = Json::array();
  for (const auto& run : status.running)
    out["running"].push_back(
        {{"id", run.id}, {"task", run.task},
         {"started_at", run.started_at ? Json(core::format_rfc3339(*run.started_at, core::Precision::milliseconds))
                                       : Json(nullptr)},
         {"age", run.started_at ? Json(std::chrono::duration<double>(now - *run.started_at).count()) : Json(nullptr)},
         {"deadline_at", run.deadline_at ? Json(core::format_rfc3339(*run.deadline_at)) : Json(nullptr)},
         {"worker_pid", run.worker.pid}});
  out["queue"] = Json::array();
  for (const auto& group : status.queue) out["queue"].push_back({{"group", group.name}, {"queued", group.count}});
  out["disabled"] = Json::array();
  for (const auto& task : status.disabled) out["disabled"].push_back({{"name", task.name}, {"reason", task.reason}});
  return out;
}

void print_status(const Status& status, core::Time now) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& worker : workers_of(status.running))
    rows.push_back({worker.identity.host, std::to_string(worker.identity.pid), std::to_string(worker.runs), worker.alive});
  fmt::print("Workers with runs in flight:\n");
  print_table({"HOST", "PID", "RUNS", "ALIVE"}, rows);
  rows.clear();
  for (const auto& run : status.running)
    rows.push_back({std::to_string(run.id), run.task, std::to_string(run.worker.pid), relative_time(run.started_at, now),
                    relative_time(run.deadline_at, now)});
  fmt::print("\nRuns in flight:\n");
  print_table({"ID", "TASK", "WORKER", "STARTED", "DEADLINE"}, rows);
  rows.clear();
  for (const auto& group : status.queue) rows.push_back({group.name.empty() ? "-" : group.name, std::to_string(group.count)});
  fmt::print("\nQueued runs:\n");
  print_table({"GROUP", "QUEUED"}, rows);
  rows.clear();
  for (const auto& task : status.disabled) rows.push_back({task.name, task.reason});
  fmt::print("\nDisabled tasks:\n");
  print_table({"NAME", "REASON"}, rows);
}

Result<void> status(const Context& context) {
  auto db = context.open_db(store::IfMissing::use_empty);
  if (!db) return std::unexpected(db.error());
  auto read = read_status(*db);
  if (!read) return std::unexpected(read.error());
  core::Time now = context.clock.now();
  if (context.json) print_json(status_json(*read, now));
  else print_status(*read, now);
  return {};
}

}  // namespace

void add_status_command(CLI::App& app, Context& context, Action& action) {
  auto* command = app.add_subcommand("status", "Workers, runs in flight, queue depth per group, disabled tasks");
  command->callback([&context, &action] { action = [&context] { return status(context); }; });
}

}  // namespace taskd::cli
