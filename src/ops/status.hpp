#pragma once
// status: the workers, the runs in flight, the queues, the disabled and
// malformed tasks and the size of the history, as values.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "ops/json.hpp"
#include "sched/recovery.hpp"
#include "store/overview.hpp"
#include "store/runs.hpp"
#include "store/workers.hpp"

namespace taskd::ops {

// A worker: a registered loop (`run`, `work`), busy or idle, or a process
// that does not register (`run-once`) seen through the runs it executes.
struct WorkerSeen {
  std::optional<store::WorkerRow> row;  // none: not registered
  store::WorkerIdentity identity;
  int runs = 0;
  sched::Liveness liveness = sched::Liveness::unknown;
};

// The registered workers, and those seen only through the runs they execute.
std::vector<WorkerSeen> workers_of(bool one_machine, const std::vector<store::WorkerRow>& rows,
                                   const std::vector<store::InFlightRun>& runs, core::Time now);

// Whether a taskd of `host` runs (a worker row whose heartbeat is recent,
// or a live process here), and when one was last heard of.
struct HostSeen {
  bool alive = false;
  std::optional<core::Time> last_seen;
};

HostSeen host_seen(const std::vector<WorkerSeen>& workers, const std::string& host);

// Status names at most this many disabled tasks, and counts them all
// (taskd list --state disabled lists them).
constexpr std::int64_t disabled_shown = 20;

// A task that status names, and why: why it is disabled, or what is wrong
// with its row.
struct DisabledTask {
  std::string name;
  std::string reason;
};

// The hosts' part of status: who runs taskd where, and what it runs. It
// reads no task row, so a board may ask for it often.
struct Hosts {
  bool one_machine = true;  // a SQLite file (see sched::liveness_of)
  std::vector<store::WorkerRow> workers;
  std::vector<store::TickRow> ticks;  // run-once's, the newest first
  std::vector<store::InFlightRun> running;
  std::vector<store::NamedCount> pinned;  // queued runs of tasks pinned to a host, by host
};

core::Result<Hosts> read_hosts(store::Database& db);
// {"workers", "ticks", "running", "pinned"}, as status_json has them.
Json hosts_json(const Hosts& hosts, core::Time now);

struct Status : Hosts {
  std::vector<store::NamedCount> queue;
  std::vector<DisabledTask> disabled;  // the first disabled_shown, by name
  std::int64_t disabled_count = 0;
  std::vector<DisabledTask> malformed;  // the first disabled_shown whose rows are malformed, by name
  std::int64_t malformed_count = 0;
  store::HistorySize history;
  std::uintmax_t file_bytes = 0;  // the database file and its WAL, or its tables on a server
  // A server reached over TCP without TLS verification; a host whose clock is off the server's.
  std::vector<std::string> warnings;
};

core::Result<Status> read_status(store::Database& db);
Json status_json(const Status& status, core::Time now);

}  // namespace taskd::ops
