#pragma once
// check: the health of the tasks and of the scheduler, judged as a
// monitoring plugin judges (OK, WARNING, CRITICAL). It writes nothing.
#include <optional>

#include "core/error.hpp"
#include "core/health.hpp"
#include "ops/json.hpp"
#include "sched/clock.hpp"
#include "store/tasks.hpp"

namespace taskd::ops {

struct CheckArgs {
  store::TaskFilter selection;       // the tasks judged: names, group, owner
  std::optional<core::Millis> late;  // none: lateness is not judged
  core::TimeStyle style;             // of the times in the problems' sentences
};

struct Checked {
  core::SchedulerFacts scheduler;
  core::CheckReport report;
  std::optional<core::Millis> late;
};

// The schedulers seen on the database: the newest heartbeat of a taskd run
// and the newest tick of run-once (overdue_tasks left 0).
core::Result<core::SchedulerFacts> read_schedulers(store::Database& db);

// Why a task of `schedule`, just added or changed, will not run on its every
// slot: the only scheduler seen is run-once, ticking less often (see
// core::slow_ticks).
core::Result<std::optional<std::string>> slow_scheduler(store::Database& db, const core::Schedule& schedule,
                                                        core::Time now);

// Each task named must exist: a check of a name that is not there (a typo,
// a task removed) must not pass. The time is read from `clock` once they do.
core::Result<Checked> check_tasks(store::Database& db, const CheckArgs& args, const sched::Clock& clock);
// The verdict with what led to it.
Json checked_json(const Checked& checked);

}  // namespace taskd::ops
