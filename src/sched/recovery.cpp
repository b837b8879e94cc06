#include "sched/recovery.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "exec/spawn_ledger.hpp"
#include "sched/outcome.hpp"

namespace taskd::sched {
namespace {

bool rebooted_since(const store::WorkerIdentity& worker, const store::WorkerIdentity& self) {
  return !worker.boot_id.empty() && worker.boot_id != self.boot_id;
}

// Whether `worker` ran on this machine, whose processes this one sees: on a
// SQLite file, one machine's, any worker under this host id; on a server,
// one under this host id since this boot. Another boot id under this host
// id is this machine before a reboot or another machine given the same
// host id (a clone, a run-once elsewhere): its runs are told by their
// leases, so that a live worker elsewhere is never taken for a dead one.
bool on_this_machine(bool one_machine, const store::WorkerIdentity& worker, const store::WorkerIdentity& self) {
  return worker.host == self.host && (one_machine || !rebooted_since(worker, self));
}

// Why the run's worker is gone, or nothing when it may still be working.
std::optional<std::string> gone_reason(const store::Database& db, const store::InFlightRun& run, core::Time now,
                                       const store::WorkerIdentity& self, const ProcessTable& processes) {
  const auto& worker = run.worker;
  bool here = on_this_machine(db.file().has_value(), worker, self);
  if (here && rebooted_since(worker, self))
    return fmt::format("lost: the machine rebooted while worker pid {} ran it", worker.pid);
  if (here && !processes.is_running(worker.pid, worker.started_at))
    return fmt::format("lost: worker pid {} on {} is gone (killed or crashed)", worker.pid, worker.host);
  bool leases_renewed = !db.file();
  if (here && !leases_renewed) return std::nullopt;
  if (!run.lease_expires_at || now < *run.lease_expires_at + lease_margin(db)) return std::nullopt;
  return fmt::format("lost: the lease of worker pid {} on {} expired at {}{}", worker.pid, worker.host,
                     core::format_rfc3339(*run.lease_expires_at, core::Precision::milliseconds),
                     leases_renewed ? " (not renewed: the worker is gone, cut off from the database or frozen)" : "");
}

std::string ledger_of(const store::Database& db, const store::WorkerIdentity& worker) {
  return exec::spawn_ledger_path(db.local_stem(), worker.pid, worker.started_at);
}

// Kills what a dead worker of this host left of the run: its child's group
// (or, when the worker died before recording the child, the group its spawn
// ledger names), and every process that carries the attempt's token, which
// includes those that left the group (setsid, a double fork).
void stop_children(const store::Database& db, const store::InFlightRun& run, const ProcessTable& processes) {
  if (run.child_pid > 0) processes.kill_group(run.child_pid, run.child_started_at);
  pid_t spawned = run.child_pid > 0 ? 0 : exec::find_in_spawn_ledger(ledger_of(db, run.worker), run.attempt_uid);
  processes.kill_attempt(run.attempt_uid, spawned);
}

// The end of a run found lost, for the reason given.
AttemptEnd lost_end(const store::InFlightRun& run, std::string reason) {
  AttemptEnd end;
  end.run_id = run.id;
  end.task_id = run.task_id;
  end.attempt_uid = run.attempt_uid;
  end.trigger = run.trigger;
  end.outcome = core::AttemptOutcome::lost;
  end.reason = std::move(reason);
  return end;
}

}  // namespace

std::chrono::milliseconds lease_margin(const store::Database& db) {
  return db.file() ? fixed_lease_margin : renewed_lease_margin;
}

Liveness liveness_of(bool one_machine, const store::WorkerIdentity& worker, std::optional<core::Time> heartbeat_at,
                     core::Time now, const store::WorkerIdentity& self, const ProcessTable& processes) {
  if (on_this_machine(one_machine, worker, self)) {
    bool lives = !rebooted_since(worker, self) && processes.is_running(worker.pid, worker.started_at);
    return lives ? Liveness::alive : Liveness::gone;
  }
  if (!heartbeat_at) return Liveness::unknown;
  return now - *heartbeat_at <= heartbeat_alive_window ? Liveness::alive : Liveness::stale;
}

core::Result<int> remove_gone_workers(store::Database& db, core::Time now, const store::WorkerIdentity& self,
                                      const ProcessTable& processes) {
  auto workers = TRY(store::list_workers(db));
  std::map<std::string, core::Time> last_heard_of;  // by host
  for (const auto& worker : workers) {
    auto& last = last_heard_of[worker.identity.host];
    last = std::max(last, worker.heartbeat_at);
  }
  int removed = 0;
  for (const auto& worker : workers) {
    auto liveness = liveness_of(db.file().has_value(), worker.identity, worker.heartbeat_at, now, self, processes);
    bool hosts_last = worker.heartbeat_at == last_heard_of[worker.identity.host];
    auto silent = now - worker.heartbeat_at;
    bool silent_too_long = liveness == Liveness::stale &&
                           silent >= (hosts_last ? core::Millis{silent_host_forgotten} : core::Millis{silent_worker_removal});
    if (liveness != Liveness::gone && !silent_too_long) continue;
    TRY(store::unregister_worker(db, worker.id));
    // A ledger is this machine's: a dead worker's here, or one of an earlier
    // boot under this host id (on a server, told by its silence).
    if (liveness == Liveness::gone || worker.identity.host == self.host)
      exec::remove_spawn_ledger(ledger_of(db, worker.identity));
    ++removed;
  }
  return removed;
}

core::Result<std::vector<RunReport>> recover_lost_runs(store::Database& db, core::Time now,
                                                       const store::WorkerIdentity& self,
                                                       const ProcessTable& processes) {
  auto running = TRY(store::running_runs(db));
  std::vector<RunReport> lost;
  std::set<std::string> dead_ledgers;
  for (const auto& run : running) {
    auto reason = gone_reason(db, run, now, self, processes);
    if (!reason) continue;
    // Before the task can run again, what the dead worker started must stop.
    if (on_this_machine(db.file().has_value(), run.worker, self)) {
      stop_children(db, run, processes);
      // A worker that lives (frozen past its lease) still writes its ledger.
      if (!processes.is_running(run.worker.pid, run.worker.started_at)) dead_ledgers.insert(ledger_of(db, run.worker));
    }
    auto recorded = TRY(record_attempt_end(db, lost_end(run, *reason), now));
    // Every host may find the run lost at once: the one whose write ended it reports it.
    if (recorded.written) lost.push_back({run.id, run.task, core::RunStatus::lost, *reason});
  }
  std::ranges::for_each(dead_ledgers, exec::remove_spawn_ledger);
  TRY(remove_gone_workers(db, now, self, processes));
  return lost;
}

core::Result<std::vector<RunReport>> recover_unadopted_runs(store::Database& db, core::Time now,
                                                            const store::WorkerIdentity& self,
                                                            const std::set<std::int64_t>& adopted,
                                                            const ProcessTable& processes) {
  auto running = TRY(store::running_runs(db));
  std::vector<RunReport> lost;
  for (const auto& run : running) {
    const auto& worker = run.worker;
    bool ours = worker.host == self.host && worker.pid == self.pid && worker.started_at == self.started_at;
    if (!ours || adopted.contains(run.id)) continue;
    stop_children(db, run, processes);
    auto end = lost_end(run, "lost: taskd executed its binary again, which could not take the run over");
    auto recorded = TRY(record_attempt_end(db, end, now));
    if (recorded.written) lost.push_back({run.id, run.task, core::RunStatus::lost, end.reason});
  }
  return lost;
}

core::Result<std::vector<RunReport>> recover_as_probed(store::Database& db, const store::TickWork& work,
                                                       core::Time now, const store::WorkerIdentity& self,
                                                       const ProcessTable& processes) {
  if (work.running) return recover_lost_runs(db, now, self, processes);
  if (work.workers) {
    TRY(remove_gone_workers(db, now, self, processes));
  }
  return std::vector<RunReport>{};
}

}  // namespace taskd::sched
