#include "ops/run_once.hpp"

#include "exec/supervisor.hpp"
#include "ops/check.hpp"
#include "sched/presence.hpp"
#include "sched/recovery.hpp"
#include "sched/tick.hpp"
#include "store/tasks.hpp"
#include "store/workers.hpp"

namespace taskd::ops {

core::Result<std::vector<sched::RunReport>> tick_and_work(store::Database& db, core::Time started,
                                                          const sched::WorkerOptions& worker,
                                                          exec::ContainmentChoice contained, const sched::Clock& clock,
                                                          const DisabledSink& on_disabled) {
  auto self = sched::current_worker(worker.host_id);
  TRY(sched::check_host_id_free(db, self, started));
  // A scheduler seen ticking before this tick: the slots it finds missed fell between two ticks.
  auto before = TRY(read_schedulers(db));
  TRY(store::record_tick(db, self, started));
  TRY(store::make_due_at_boot(db, self.host, self.boot_id, started));
  auto work = TRY(store::tick_work(db, started));
  auto lost = TRY(sched::recover_as_probed(db, work, started, self, sched::SystemProcessTable{}));
  if (!sched::enqueue_needed(work) && !work.claimable) return lost;
  auto missed =
      core::scheduler_ticking(before, started) ? core::Missed::between_ticks : core::Missed::while_no_scheduler;
  auto ticked = TRY(sched::enqueue_due(db, started, 500, {}, sched::system_processes(), {}, {}, missed));
  for (const auto& disabled : ticked.disabled) on_disabled(disabled);
  exec::Supervisor supervisor(std::move(contained), worker.lease);
  auto reports = TRY(sched::work_until_idle(db, clock, supervisor, worker));
  reports.insert(reports.begin(), lost.begin(), lost.end());
  return reports;
}

Json run_reports_json(const std::vector<sched::RunReport>& reports) {
  Json out = Json::array();
  for (const auto& report : reports)
    out.push_back({{"id", report.run_id}, {"task", report.task}, {"status", core::to_string(report.status)},
                   {"reason", report.reason}});
  return out;
}

}  // namespace taskd::ops
