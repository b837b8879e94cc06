#pragma once
// The tick: every task whose next_run_at has come gets one QUEUED run (or a
// SKIPPED row), and its next_run_at moves to the next planned slot. With
// overlap=replace the new run takes the place of the running one. A due
// task whose row is malformed is disabled instead, and the others go on.
#include <functional>
#include <vector>

#include "core/policy.hpp"
#include "core/time.hpp"
#include "sched/process_table.hpp"
#include "sched/report.hpp"
#include "store/database.hpp"
#include "store/tasks.hpp"

namespace taskd::sched {

struct TickResult {
  int enqueued = 0;
  int skipped = 0;
  int replaced = 0;  // running attempts stopped by overlap=replace
  // A due task another session held past the lock timeout (a host frozen
  // in the middle of a transaction) was left for a later tick.
  bool held = false;
  // Due tasks whose rows are malformed: each was disabled, with what is
  // wrong as its reason, and the other tasks went on.
  std::vector<MalformedReport> disabled;
};

// Enqueues what is due at `now`, in short transactions of at most `batch`
// tasks each, so other processes are never locked out for long. `sink`
// hears of each run queued and each SKIPPED row. Replaced attempts get
// SIGTERM (through `processes`) once their end is committed, on a SQLite
// file (on a server their workers are asked to stop them: see
// replace_active_runs). `before_commit` is called inside each transaction
// that found due tasks, before its commit (a crash test's hook);
// `between_batches` after each commit (a loop keeps its runs' leases while
// a herd of due tasks takes longer than half a lease to queue). `missed`
// words the SKIPPED rows of due slots before the one served (see on_enqueue).
core::Result<TickResult> enqueue_due(store::Database& db, core::Time now, int batch = 500,
                                     const ReportSink& sink = {},
                                     const ProcessTable& processes = system_processes(),
                                     const std::function<void()>& before_commit = {},
                                     const std::function<core::Result<void>()>& between_batches = {},
                                     core::Missed missed = core::Missed::while_no_scheduler);

// Whether a tick whose probe found `work` has anything to enqueue once it
// recovered as probed: a task due, or a run running, which recovery may
// find lost with a retry due at once.
bool enqueue_needed(const store::TickWork& work);

}  // namespace taskd::sched
