#include "ops/status.hpp"

#include <fmt/format.h>
#include <map>
#include <tuple>

#include "sched/clock.hpp"
#include "store/tasks.hpp"

namespace taskd::ops {
namespace {

using core::Result;

using WorkerKey = std::tuple<std::string, pid_t, std::int64_t>;

WorkerKey key_of(const store::WorkerIdentity& identity) {
  return {identity.host, identity.pid, identity.started_at};
}

std::string liveness_name(sched::Liveness liveness) {
  switch (liveness) {
    case sched::Liveness::alive: return "alive";
    case sched::Liveness::gone: return "dead";
    case sched::Liveness::stale: return "stale";
    case sched::Liveness::unknown: return "unknown";
  }
  return "unknown";
}

Json worker_json(const WorkerSeen& worker) {
  const auto& row = worker.row;
  return {{"role", row ? Json(row->role) : Json(nullptr)},
          {"host", worker.identity.host},
          {"pid", worker.identity.pid},
          {"since", time_json(row ? std::optional(row->started_at) : std::nullopt)},
          {"heartbeat_at", time_json(row ? std::optional(row->heartbeat_at) : std::nullopt)},
          {"concurrency", row ? Json(row->concurrency) : Json(nullptr)},
          {"runs", worker.runs},
          {"state", liveness_name(worker.liveness)},
          {"clock_offset_ms", row ? Json(row->clock_offset.count()) : Json(nullptr)},
          {"containment", row ? Json(row->containment) : Json(nullptr)}};
}

std::optional<std::string> clock_warning(const store::WorkerRow& worker) {
  auto offset = worker.clock_offset;
  if (!sched::clock_is_off(offset)) return std::nullopt;
  return fmt::format("the clock of {} (pid {}) is {} {} the database server's; taskd keeps the server's time",
                     worker.identity.host, worker.identity.pid, core::format_duration_ms(std::chrono::abs(offset)),
                     offset < offset.zero() ? "behind" : "ahead of");
}

Result<std::vector<DisabledTask>> first_disabled(store::Database& db) {
  std::vector<DisabledTask> disabled;
  TRY(store::for_each_task(db, {.condition = core::Condition::disabled, .limit = disabled_shown},
                           [&](const store::StoredTask& stored) -> Result<void> {
                             const auto& task = store::readable(stored);
                             disabled.push_back({task.definition.name, task.state.disabled_reason});
                             return {};
                           }));
  return disabled;
}

// The tasks whose rows are malformed (taskd does not run them): the first
// disabled_shown, and how many. Every row is read to find them.
Result<void> read_malformed(store::Database& db, Status& status) {
  return store::for_each_task(db, {}, [&](const store::StoredTask& task) -> Result<void> {
    if (task) return {};
    if (++status.malformed_count <= disabled_shown)
      status.malformed.push_back(
          {task.error().readable.definition.name, store::describe_problems(task.error().problems)});
    return {};
  });
}

}  // namespace

std::vector<WorkerSeen> workers_of(bool one_machine, const std::vector<store::WorkerRow>& rows,
                                   const std::vector<store::InFlightRun>& runs, core::Time now) {
  auto self = sched::current_worker();
  const auto& processes = sched::system_processes();
  std::vector<WorkerSeen> workers;
  std::map<WorkerKey, std::size_t> index;
  for (const auto& row : rows) {
    index.emplace(key_of(row.identity), workers.size());
    workers.push_back({row, row.identity, 0, sched::liveness_of(one_machine, row.identity, row.heartbeat_at, now, self, processes)});
  }
  for (const auto& run : runs) {
    auto [found, added] = index.emplace(key_of(run.worker), workers.size());
    if (added)
      workers.push_back({std::nullopt, run.worker, 0, sched::liveness_of(one_machine, run.worker, std::nullopt, now, self, processes)});
    workers[found->second].runs += 1;
  }
  return workers;
}

HostSeen host_seen(const std::vector<WorkerSeen>& workers, const std::string& host) {
  HostSeen seen;
  for (const auto& worker : workers) {
    if (worker.identity.host != host) continue;
    seen.alive = seen.alive || worker.liveness == sched::Liveness::alive;
    if (worker.row && (!seen.last_seen || worker.row->heartbeat_at > *seen.last_seen))
      seen.last_seen = worker.row->heartbeat_at;
  }
  return seen;
}

Result<Hosts> read_hosts(store::Database& db) {
  Hosts hosts;
  hosts.one_machine = db.file().has_value();
  hosts.workers = TRY(store::list_workers(db));
  hosts.ticks = TRY(store::list_ticks(db));
  hosts.running = TRY(store::running_runs(db));
  hosts.pinned = TRY(store::queue_depth_by_host(db));
  return hosts;
}

Result<Status> read_status(store::Database& db) {
  Status status{TRY(read_hosts(db))};
  status.queue = TRY(store::queue_depth_by_group(db));
  status.disabled = TRY(first_disabled(db));
  status.disabled_count = TRY(store::count_tasks(db, {.condition = core::Condition::disabled}));
  TRY(read_malformed(db, status));
  status.history = TRY(store::history_size(db));
  status.file_bytes = TRY(store::database_bytes(db));
  auto warning = TRY(store::transport_warning(db));
  if (!warning.empty()) status.warnings.push_back(warning);
  for (const auto& worker : status.workers) {
    if (auto off = clock_warning(worker)) status.warnings.push_back(*off);
  }
  return status;
}

Json hosts_json(const Hosts& status, core::Time now) {
  Json out;
  auto workers = workers_of(status.one_machine, status.workers, status.running, now);
  out["workers"] = Json::array();
  for (const auto& worker : workers) out["workers"].push_back(worker_json(worker));
  out["ticks"] = Json::array();
  for (const auto& tick : status.ticks)
    out["ticks"].push_back({{"host", tick.host},
                            {"ticked_at", time_json(tick.last_at)},
                            {"every", seconds_json(tick.every)}});
  out["running"] = Json::array();
  for (const auto& run : status.running)
    out["running"].push_back(
        {{"id", run.id}, {"task", run.task}, {"host", run.worker.host},
         {"started_at", run.started_at ? Json(core::format_rfc3339(*run.started_at, core::Precision::milliseconds))
                                       : Json(nullptr)},
         {"age", run.started_at ? Json(std::chrono::duration<double>(now - *run.started_at).count()) : Json(nullptr)},
         {"deadline_at", run.deadline_at ? Json(core::format_rfc3339(*run.deadline_at)) : Json(nullptr)},
         {"worker_pid", run.worker.pid}});
  out["pinned"] = Json::array();
  for (const auto& host : status.pinned) {
    auto seen = host_seen(workers, host.name);
    out["pinned"].push_back({{"host", host.name}, {"queued", host.count}, {"waiting", !seen.alive},
                             {"last_seen", time_json(seen.last_seen)}});
  }
  return out;
}

Json status_json(const Status& status, core::Time now) {
  auto out = hosts_json(status, now);
  out["queue"] = Json::array();
  for (const auto& group : status.queue) out["queue"].push_back({{"group", group.name}, {"queued", group.count}});
  out["disabled"] = Json::array();
  for (const auto& task : status.disabled) out["disabled"].push_back({{"name", task.name}, {"reason", task.reason}});
  out["disabled_count"] = status.disabled_count;
  out["malformed"] = Json::array();
  for (const auto& task : status.malformed) out["malformed"].push_back({{"name", task.name}, {"problem", task.reason}});
  out["malformed_count"] = status.malformed_count;
  out["warnings"] = Json::array();
  for (const auto& warning : status.warnings) out["warnings"].push_back(warning);
  out["history"] = {{"runs", status.history.runs},
                    {"output_bytes", status.history.output_bytes},
                    {"database_bytes", status.file_bytes}};
  return out;
}

}  // namespace taskd::ops
