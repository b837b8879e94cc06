#pragma once
// Leases, not hopes: a RUNNING run whose worker is provably gone is recorded
// LOST (a failure for the retry ladder), after whatever it left running is
// killed, so the task can run again and nothing stays stuck.
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <sys/types.h>
#include <vector>

#include "sched/process_table.hpp"
#include "sched/worker.hpp"
#include "store/runs.hpp"
#include "store/tasks.hpp"
#include "store/workers.hpp"

namespace taskd::sched {

// On a server, a worker renews the leases of its runs (see WorkerOptions::
// lease) and ends them itself long before a lease it could not renew
// expires: half a lease before, at the least a second (--lease is 2 s or
// more). A lease expired by this margin as well means the worker is gone,
// cut off or frozen, and its run is lost, whatever host it is on. The margin
// only has to cover what that half lease may not: the error of a host's
// reading of the server's clock (half a round trip) and the rates of the
// clocks (a few milliseconds a lease; see SystemClock).
inline constexpr std::chrono::milliseconds renewed_lease_margin{500};
// On a SQLite file a lease is the run's deadline plus its kill grace, never
// renewed; a worker under another host id is judged gone this long after.
inline constexpr std::chrono::milliseconds fixed_lease_margin{std::chrono::seconds{60}};
// The margin for the leases of `db`'s runs.
std::chrono::milliseconds lease_margin(const store::Database& db);

// How often a loop refreshes the heartbeat of its row in the workers table.
inline constexpr std::chrono::seconds heartbeat_interval{10};
// A worker on another host counts as alive while its last heartbeat is at
// most this old, and as stale after.
inline constexpr std::chrono::seconds heartbeat_alive_window = 3 * heartbeat_interval;
// A worker on another host silent for this long is taken for gone: its row
// is removed (a loop that wakes up after that registers again), but for the
// newest row of its host, which stays until silent_host_forgotten, so that
// `status` still lists the host, dead, and when it was last seen.
inline constexpr std::chrono::hours silent_worker_removal{1};
inline constexpr std::chrono::days silent_host_forgotten{7};

// What this process can tell of a worker: on this machine (this host id; on
// a server, since this boot too), whether its process lives (`gone`: it
// died, its pid was reused, or the machine rebooted); elsewhere, whether its
// heartbeat is recent (`alive`, `stale`), or `unknown` without a heartbeat.
// `one_machine`: the database is a SQLite file.
enum class Liveness { alive, gone, stale, unknown };
Liveness liveness_of(bool one_machine, const store::WorkerIdentity& worker, std::optional<core::Time> heartbeat_at,
                     core::Time now, const store::WorkerIdentity& self, const ProcessTable& processes);

// Records as LOST every running run whose worker is gone: on this machine
// (this host name; on a server, since this boot too) at once when its
// process is dead, or on a SQLite file when the machine rebooted; elsewhere,
// or on a server whatever the host, once its lease has expired by the
// margin. Then removes the rows of the workers that are gone (see
// remove_gone_workers).
core::Result<std::vector<RunReport>> recover_lost_runs(store::Database& db, core::Time now,
                                                       const store::WorkerIdentity& self,
                                                       const ProcessTable& processes);

// The runs this process (`self`, the same across execve) holds as running
// but did not take over after executing its binary again (`adopted`: those
// it did): a hand-over it could not read. Their processes are killed and
// they are recorded as lost.
core::Result<std::vector<RunReport>> recover_unadopted_runs(store::Database& db, core::Time now,
                                                            const store::WorkerIdentity& self,
                                                            const std::set<std::int64_t>& adopted,
                                                            const ProcessTable& processes);

// Recovery as far as a tick's probe calls for: all of it when a run is
// running, only the workers' rows when there are any, else nothing.
core::Result<std::vector<RunReport>> recover_as_probed(store::Database& db, const store::TickWork& work,
                                                       core::Time now, const store::WorkerIdentity& self,
                                                       const ProcessTable& processes);

// Deletes the rows of the workers table whose process is gone: on this host
// when it is provably dead, on another host when it has been silent for
// silent_worker_removal (silent_host_forgotten for the newest row of its
// host). Returns how many.
core::Result<int> remove_gone_workers(store::Database& db, core::Time now, const store::WorkerIdentity& self,
                                      const ProcessTable& processes);

}  // namespace taskd::sched
