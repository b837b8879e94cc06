#pragma once
// The long-running scheduler: `taskd run` (tick and work in one process) and
// `taskd work` (claim and run only). Each pass recovers lost runs (at start
// and once per tick bound), enqueues what is due and fills the free slots;
// then the loop sleeps in one poll() until the earliest of: the next due
// time or claimable queued run, a child's exit, a signal, its next
// heartbeat, the tick bound, or a commit by another process. It keeps no
// task in memory, only the runs it executes, and has a row in the workers
// table while it runs.
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "core/time.hpp"
#include "exec/cgroup.hpp"
#include "exec/handover.hpp"
#include "exec/reexec.hpp"
#include "sched/log.hpp"
#include "sched/retention.hpp"
#include "sched/worker.hpp"
#include "store/database.hpp"
#include "store/runs.hpp"

namespace taskd::sched {

enum class Role { work, tick_and_work };

struct LoopOptions {
  Role role = Role::tick_and_work;
  core::Millis tick{std::chrono::seconds{30}};  // the longest sleep between two passes
  WorkerOptions worker;
  std::optional<Retention> retention;  // --keep-days: a batch of expired runs deleted each pass
  // --drain: after a SIGTERM the runs in flight may finish for this long
  // before they are ended (0: at once).
  core::Millis drain{std::chrono::seconds{60}};
  // What SIGUSR2 executes; none: SIGUSR2 is ignored.
  std::optional<exec::Image> image;
  // Told the containment of the runs once the loop is there.
  std::function<void(const std::string& containment)> on_start;
};

// How the loop ended: stopped (SIGTERM or SIGINT: nothing more claimed, the
// runs in flight finished within the drain or were ended, and every one was
// recorded), aborted (SIGINT once the runs were being ended: children
// killed, nothing recorded) or upgrade (SIGUSR2 with a binary that cannot
// take runs over: nothing more claimed, the runs in flight finished and
// were recorded; the caller is to execute options.image, with no record).
// Otherwise SIGUSR2 does not end it: taskd executes its binary again, which
// takes over the runs in flight (see run_loop).
enum class LoopEnd { stopped, aborted, upgrade };

// When the loop should pass again if nothing wakes it first: the earliest
// upcoming time after `now` that its role cares for (a worker does not
// enqueue, so due tasks are not its business), its next heartbeat (at once
// if overdue), and at the latest now + tick.
core::Time next_pass_at(core::Time now, const store::Upcoming& upcoming, core::Time heartbeat_due, core::Millis tick,
                        Role role);

// One tick, as `taskd tick` does: recovers lost runs, enqueues what is
// due, logging each run, and deletes the runs the retention expired. Only
// what the probe finds work for is read or locked: with no task due, no run
// running and none expired, at most the workers' rows are checked, and no
// write lock is taken unless one of them is gone.
core::Result<void> tick_once(store::Database& db, const Clock& clock, Logger& log,
                             const std::optional<Retention>& retention, std::string_view host_id = {});

// Runs the loop until a signal ends it, its runs contained as `containment`
// says. On SIGUSR2 it claims nothing more, and once the ends of its runs
// are written it executes options.image in place, handing over the runs in
// flight (see exec/handover.hpp); when that fails it goes on as it was.
// `handed` is what a previous image handed over, if any: its runs are
// taken over, with their containment, watchdog and row in the workers
// table; a record that cannot be taken over (another version's, malformed)
// has its runs ended as a shutdown ends them and queued again for their
// slots, and the loop starts afresh; runs of this process's that no record
// names are recorded as lost. `handed` is taken (reset) once the loop is
// there to take it over: until then, a failure leaves it to the caller
// (see refuse_handover).
core::Result<LoopEnd> run_loop(store::Database& db, const Clock& clock, Logger& log, const LoopOptions& options,
                               exec::Containment containment, std::optional<exec::Handover>& handed);

// For a taskd that fails to start with a hand-over (`why`): ends its runs as
// a shutdown ends them, records them as queued again when `db` is open
// (otherwise the next start finds them lost), and closes what it kept open.
void refuse_handover(store::Database* db, const Clock& clock, Logger& log, const exec::Handover& handover,
                     const core::Error& why);

}  // namespace taskd::sched
