#pragma once
// The worker half of the scheduler: claims queued runs (the drop rule, then a
// new fenced attempt), runs each as a child process, and records every
// outcome through the policy.
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/task.hpp"
#include "exec/run_files.hpp"
#include "exec/runner.hpp"
#include "sched/clock.hpp"
#include "sched/crash_point.hpp"
#include "sched/report.hpp"
#include "store/database.hpp"
#include "store/runs.hpp"

namespace taskd::exec {
class RecordReader;
class RecordWriter;
struct ShutdownEntry;
}  // namespace taskd::exec

namespace taskd::sched {

struct WorkerOptions {
  int concurrency = 1;
  std::size_t state_limit = 64 * 1024;   // bytes of $TASKD_STATE kept per task
  std::optional<core::Time> claim_until;  // stop claiming new runs after this
  CrashSwitch crash;                      // TASKD_CRASH_AT, for crash tests
  std::string host_id;                    // --host-id; empty: the hostname
  // --lease, on a server: a run's lease lasts this long past each renewal,
  // plus its task's kill grace. The worker renews the leases of its runs
  // every quarter of it; a run whose lease went half of it unrenewed (the
  // database out of reach, or this process frozen) has its child ended by
  // the worker itself (fencing), long before another host may take the run
  // for lost. None: a lease is the run's deadline plus its kill grace, not
  // renewed (a SQLite file, on one machine).
  std::optional<core::Millis> lease;
};

// How soon a worker that may have been asked to stop a run renews its
// leases, which tells it: a second after the last renewal, so that a stream
// of stop requests costs a renewal a second at most.
inline constexpr std::chrono::seconds stop_request_delay{1};

// How a worker with `lease` bounds its session on a server, so that no host
// waits on another: a lock another session holds is waited for a sixteenth
// of the lease (a second at the most), then looked at again later, so that
// the few waits a claim may meet fit well within the quarter lease between
// a renewal's due time and the fencing point; a session of its left idle in
// a transaction (its process frozen, or cut off) is ended by the server
// after a quarter of the lease, which frees its locks long before its runs'
// leases end and they are recovered; one whose machine leaves the server's
// data unacknowledged for 10 s (paused, or cut off) is given up by the
// server's TCP, a lease-independent time that a lossy network survives.
store::SessionBounds session_bounds(core::Millis lease);

// How a call of Worker::fill ended.
enum class Filled {
  done,  // every slot is busy, or nothing is claimable
  more,  // it stopped after a bounded number of claims: call again once signals and exits were looked at
  held,  // a claimable run's task was held by another session past the lock wait: look again later
};

class WorkerImpl;

// The runs in flight a previous image of this process handed over, as read
// from its record (see Worker::hand_over), their run directory checked.
struct HandedRun;
struct WorkerHandover {
  WorkerHandover();
  WorkerHandover(WorkerHandover&&) noexcept;
  ~WorkerHandover();
  std::optional<exec::RunDirectory> run_directory;
  exec::SteadyTime renewed_at, output_written_at;
  std::vector<HandedRun> runs;
  // The runs' keys, as the runner knows them.
  std::vector<std::uint64_t> keys() const;
};
core::Result<WorkerHandover> read_worker(exec::RecordReader& record);

// The worker one step at a time, for a loop that waits for more than its
// children: fill the free slots, then record the children that ended.
class Worker {
 public:
  Worker(store::Database& db, const Clock& clock, exec::Runner& runner, const WorkerOptions& options);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Claims and launches queued runs until every slot is busy or the queue
  // is empty, or a bounded number of claims were made.
  core::Result<Filled> fill();
  // Records the end of children that ended, with the ends an earlier call
  // could not write (the database out of reach): those are kept until
  // written, by the next call.
  core::Result<void> record(const std::vector<exec::ChildResult>& results);
  // Renews the leases of the runs in flight, and of those whose ends are
  // not written yet, when due.
  core::Result<void> keep_leases();
  // Renews them now, due or not (across an upgrade's execve).
  core::Result<void> renew_leases();
  // When the next renewal is due; none while no lease is held. Sooner when
  // the last one found a run's row held by another transaction: that lease
  // is renewed as soon as it is free, its fencing point unchanged meanwhile.
  std::optional<exec::SteadyTime> next_renewal_at() const;
  // A run in flight may have been asked to stop, by this process or another
  // (overlap=replace): the next renewal, which tells, comes within
  // stop_request_delay of the last.
  void look_for_stop_requests();
  // Stores, when due, the output so far of the runs in flight for a second
  // or more whose children wrote more since, so that `logs` shows it: once
  // a second at most, never waiting for a busy database (it tries again the
  // next time).
  void write_output_so_far();
  // When that is next due; none while no run is in flight.
  std::optional<exec::SteadyTime> next_output_write_at() const;
  // From now on, no run is claimed.
  void stop_claiming();
  // Runs are claimed again (an upgrade that failed).
  void resume_claiming();
  std::size_t running() const;
  // Whether ends of children wait to be written (the server busy or out of reach).
  bool has_unwritten_ends() const;
  // Whether a run in flight runs as another user (--user).
  bool runs_as_a_user() const;
  // The runs that started or ended since the last call, in order.
  std::vector<RunReport> take_reports();

  // What a next image of taskd takes over (kill -USR2): the runs in flight,
  // once no end waits to be written. The users' run directories, which it
  // does not take, are removed.
  void hand_over(exec::RecordWriter& record);
  // The same runs as a shutdown ends them (their child's pid and output are
  // the runner's, not set here).
  std::vector<exec::ShutdownEntry> shutdown_entries() const;
  // Takes over the runs a previous image handed over, before any fill().
  void adopt(WorkerHandover handover);

 private:
  std::unique_ptr<WorkerImpl> impl_;
};

// Runs queued runs until the queue is empty (or claiming time is over) and
// every child has ended; returns the runs that ended, in order.
core::Result<std::vector<RunReport>> work_until_idle(store::Database& db, const Clock& clock, exec::Runner& runner,
                                                     const WorkerOptions& options);

// This process as a worker: host (`host_id`, or the hostname when empty),
// boot, pid and start time.
store::WorkerIdentity current_worker(std::string_view host_id = {});

// A fresh attempt token: 128 random bits in hex.
std::string new_attempt_uid();

}  // namespace taskd::sched
