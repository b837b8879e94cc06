#pragma once
// run-once: one tick, with the runs it queues run to their end here.
#include <functional>
#include <vector>

#include "core/error.hpp"
#include "exec/cgroup.hpp"
#include "ops/json.hpp"
#include "sched/clock.hpp"
#include "sched/report.hpp"
#include "sched/worker.hpp"
#include "store/database.hpp"

namespace taskd::ops {

// Told of each due task whose row is malformed, as the tick disables it.
using DisabledSink = std::function<void(const sched::MalformedReport& disabled)>;

// The tick at `started`: recovers lost runs, queues what is due, runs what
// is queued and waits for it; every run that ended, the lost ones first. A
// due task whose row is malformed is disabled, and told to `on_disabled`.
// The tick is recorded (status, check, metrics and explain see run-once as
// a scheduler); beyond that, only what the probe finds work for is read or
// locked: with no task due and no run running or claimable, at most the
// workers' and ticks' rows are read.
core::Result<std::vector<sched::RunReport>> tick_and_work(store::Database& db, core::Time started,
                                                          const sched::WorkerOptions& worker,
                                                          exec::ContainmentChoice contained, const sched::Clock& clock,
                                                          const DisabledSink& on_disabled);
// Every run that ended, failed or not: {"id", "task", "status", "reason"}.
Json run_reports_json(const std::vector<sched::RunReport>& reports);

}  // namespace taskd::ops
