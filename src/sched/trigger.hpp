#pragma once
// `taskd trigger`: one manual run now (seed 000's manual dispatch). It does
// not move the rotation; the task's overlap mode says what happens when a
// run of it is already queued or running.
#include <cstdint>
#include <optional>

#include "core/task.hpp"
#include "sched/process_table.hpp"
#include "sched/replace.hpp"
#include "store/database.hpp"

namespace taskd::sched {

struct Triggered {
  std::optional<std::int64_t> queued_run;  // the new manual run
  std::optional<std::int64_t> active_run;  // overlap=skip: the run that made it a no-op
  bool enabled = false;                    // --force enabled the disabled task first
  bool replaced = false;                   // overlap=replace stopped the running attempt
};

// What queue_manual_run did: queued a run, or found one active.
struct ManualRun {
  std::optional<std::int64_t> queued_run;
  std::optional<std::int64_t> active_run;  // overlap=skip: the run that kept it from being queued
  std::optional<ChildToStop> to_stop;      // overlap=replace: the replaced attempt's child, to stop after the commit
};

// Inside the caller's transaction: a manual run of `task` queued at `now`
// as its overlap mode allows (with replace, `state`, which the caller
// writes, forgets the replaced attempt), the rotation untouched.
// `upstream_run_id`: the run of the task's upstream (--after) that queues it.
core::Result<ManualRun> queue_manual_run(store::Database& db, const core::Task& task, core::TaskState& state,
                                         core::Time now, std::optional<std::int64_t> upstream_run_id = std::nullopt);

// Queues a manual run of `task` at `now`, in one transaction. A disabled task
// is refused (bad input) unless `force`, which enables it first.
core::Result<Triggered> trigger_run(store::Database& db, const core::Task& task, bool force, core::Time now,
                                    const ProcessTable& processes = system_processes());

}  // namespace taskd::sched
