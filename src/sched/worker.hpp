#pragma once
// The worker half of the scheduler: claims queued runs (the drop rule, then a
// new fenced attempt), runs each as a child process, and records every
// outcome through the policy.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/task.hpp"
#include "exec/runner.hpp"
#include "sched/clock.hpp"
#include "store/database.hpp"
#include "store/runs.hpp"

namespace taskd::sched {

struct WorkerOptions {
  int concurrency = 1;
  std::size_t output_limit = 64 * 1024;  // bytes of output kept per run
  std::size_t state_limit = 64 * 1024;   // bytes of $TASKD_STATE kept per task
  int history_limit = 1000;              // finished runs kept per task
  std::optional<core::Time> claim_until;  // stop claiming new runs after this
};

// One finished run, for the caller to report.
struct RunReport {
  std::int64_t run_id = 0;
  std::string task;
  core::RunStatus status = core::RunStatus::succeeded;
  std::string reason;
};

// Runs queued runs until the queue is empty (or claiming time is over) and
// every child has ended; returns the runs that ended, in order.
core::Result<std::vector<RunReport>> work_until_idle(store::Database& db, const Clock& clock, exec::Runner& runner,
                                                     const WorkerOptions& options);

// This process as a worker: host, boot, pid and start time.
store::WorkerIdentity current_worker();

// A fresh attempt token: 128 random bits in hex.
std::string new_attempt_uid();

}  // namespace taskd::sched
