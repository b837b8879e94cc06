#pragma once
// `taskd trigger`: one manual run now (seed 000's manual dispatch). It does
// not move the rotation; the task's overlap mode says what happens when a
// run of it is already queued or running.
#include <cstdint>
#include <optional>

#include "core/task.hpp"
#include "sched/process_table.hpp"
#include "store/database.hpp"

namespace taskd::sched {

struct Triggered {
  std::optional<std::int64_t> queued_run;  // the new manual run
  std::optional<std::int64_t> active_run;  // overlap=skip: the run that made it a no-op
  bool enabled = false;                    // --force enabled the disabled task first
  bool replaced = false;                   // overlap=replace stopped the running attempt
};

// Queues a manual run of `task` at `now`, in one transaction. A disabled task
// is refused (bad input) unless `force`, which enables it first.
// `host`: the caller's host id (see enqueue_due).
core::Result<Triggered> trigger_run(store::Database& db, const core::Task& task, bool force, core::Time now,
                                    std::string_view host, const ProcessTable& processes = system_processes());

}  // namespace taskd::sched
