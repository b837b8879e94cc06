#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <tuple>

#include "cli/context.hpp"
#include "cli/format.hpp"
#include "cli/json.hpp"
#include "core/text.hpp"
#include "sched/recovery.hpp"
#include "store/overview.hpp"
#include "store/workers.hpp"
#include "store/runs.hpp"
#include "store/tasks.hpp"

namespace taskd::cli {
namespace {

using core::Result;

// A worker: a registered loop (`run`, `work`), busy or idle, or a process
// that does not register (`run-once`) seen through the runs it executes.
struct WorkerSeen {
  std::optional<store::WorkerRow> row;  // none: not registered
  store::WorkerIdentity identity;
  int runs = 0;
  sched::Liveness liveness = sched::Liveness::unknown;
};

using WorkerKey = std::tuple<std::string, pid_t, std::int64_t>;

WorkerKey key_of(const store::WorkerIdentity& identity) {
  return {identity.host, identity.pid, identity.started_at};
}

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

std::string liveness_name(sched::Liveness liveness) {
  switch (liveness) {
    case sched::Liveness::alive: return "alive";
    case sched::Liveness::gone: return "dead";
    case sched::Liveness::stale: return "stale";
    case sched::Liveness::unknown: return "unknown";
  }
  return "unknown";
}

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

Json optional_time_json(const std::optional<core::Time>& time) {
  return time ? Json(core::format_rfc3339(*time)) : Json(nullptr);
}

Json worker_json(const WorkerSeen& worker) {
  const auto& row = worker.row;
  return {{"role", row ? Json(row->role) : Json(nullptr)},
          {"host", worker.identity.host},
          {"pid", worker.identity.pid},
          {"since", optional_time_json(row ? std::optional(row->started_at) : std::nullopt)},
          {"heartbeat_at", optional_time_json(row ? std::optional(row->heartbeat_at) : std::nullopt)},
          {"concurrency", row ? Json(row->concurrency) : Json(nullptr)},
          {"runs", worker.runs},
          {"state", liveness_name(worker.liveness)},
          {"clock_offset_ms", row ? Json(row->clock_offset.count()) : Json(nullptr)},
          {"containment", row ? Json(row->containment) : Json(nullptr)}};
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

std::optional<std::string> clock_warning(const store::WorkerRow& worker) {
  auto offset = worker.clock_offset;
  if (!sched::clock_is_off(offset)) return std::nullopt;
  return fmt::format("the clock of {} (pid {}) is {} {} the database server's; taskd keeps the server's time",
                     worker.identity.host, worker.identity.pid, core::format_duration_ms(std::chrono::abs(offset)),
                     offset < offset.zero() ? "behind" : "ahead of");
}

// Whether a taskd of `host` runs (a worker row whose heartbeat is recent,
// or a live process here), and when one was last heard of.
struct HostSeen {
  bool alive = false;
  std::optional<core::Time> last_seen;
};

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

// "running" or "waiting for web1 (last seen 5m ago)".
std::string describe_host(const std::string& host, const HostSeen& seen, core::Time now) {
  if (seen.alive) return "running";
  return fmt::format("waiting for {} ({})", host,
                     seen.last_seen ? "last seen " + relative_time(seen.last_seen, now) : "never seen");
}

// Status names at most this many disabled tasks, and counts them all
// (taskd list --state disabled lists them).
constexpr std::int64_t disabled_shown = 20;

// A task that status names, and why: why it is disabled, or what is wrong
// with its row.
struct DisabledTask {
  std::string name;
  std::string reason;
};

struct Status {
  bool one_machine = true;  // a SQLite file (see sched::liveness_of)
  std::vector<store::WorkerRow> workers;
  std::vector<store::InFlightRun> running;
  std::vector<store::NamedCount> queue;
  std::vector<store::NamedCount> pinned;  // queued runs of tasks pinned to a host, by host
  std::vector<DisabledTask> disabled;  // the first disabled_shown, by name
  std::int64_t disabled_count = 0;
  std::vector<DisabledTask> malformed;  // the first disabled_shown whose rows are malformed, by name
  std::int64_t malformed_count = 0;
  store::HistorySize history;
  std::uintmax_t file_bytes = 0;  // the database file and its WAL, or its tables on a server
  // A server reached over TCP without TLS verification; a host whose clock is off the server's.
  std::vector<std::string> warnings;
};

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

Result<Status> read_status(store::Database& db) {
  Status status;
  status.one_machine = db.file().has_value();
  status.workers = TRY(store::list_workers(db));
  status.running = TRY(store::running_runs(db));
  status.queue = TRY(store::queue_depth_by_group(db));
  status.pinned = TRY(store::queue_depth_by_host(db));
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

Json status_json(const Status& status, core::Time now) {
  Json out;
  auto workers = workers_of(status.one_machine, status.workers, status.running, now);
  out["workers"] = Json::array();
  for (const auto& worker : workers) out["workers"].push_back(worker_json(worker));
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
  out["pinned"] = Json::array();
  for (const auto& host : status.pinned) {
    auto seen = host_seen(workers, host.name);
    out["pinned"].push_back({{"host", host.name}, {"queued", host.count}, {"waiting", !seen.alive},
                             {"last_seen", optional_time_json(seen.last_seen)}});
  }
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

void print_status(const Status& status, core::Time now) {
  std::vector<std::vector<std::string>> rows;
  auto workers = workers_of(status.one_machine, status.workers, status.running, now);
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
  if (!status.pinned.empty()) {
    for (const auto& host : status.pinned)
      rows.push_back({host.name, std::to_string(host.count), describe_host(host.name, host_seen(workers, host.name), now)});
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
  auto db = TRY(context.open_db(store::IfMissing::use_empty));
  auto read = TRY(read_status(db));
  for (const auto& warning : read.warnings) fmt::print(stderr, "taskd: warning: {}\n", core::printable(warning));
  core::Time now = context.clock.now();
  if (context.json) print_json(status_json(read, now));
  else print_status(read, now);
  return {};
}

}  // namespace

void add_status_command(CLI::App& app, Context& context, Action& action) {
  auto* command = app.add_subcommand("status", "Workers, runs in flight, queue depth per group, disabled tasks");
  command->callback([&context, &action] { action = [&context] { return status(context); }; });
}

}  // namespace taskd::cli
