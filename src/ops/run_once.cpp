#include "ops/run_once.hpp"

#include "exec/supervisor.hpp"
#include "sched/presence.hpp"
#include "sched/recovery.hpp"
#include "sched/tick.hpp"
#include "store/tasks.hpp"

namespace taskd::ops {

core::Result<std::vector<sched::RunReport>> tick_and_work(store::Database& db, core::Time started,
                                                          const sched::WorkerOptions& worker,
                                                          exec::ContainmentChoice contained, const sched::Clock& clock,
                                                          const DisabledSink& on_disabled) {
  auto self = sched::current_worker(worker.host_id);
  TRY(sched::check_host_id_free(db, self, started));
  auto work = TRY(store::tick_work(db, started));
  auto lost = TRY(sched::recover_as_probed(db, work, started, self, sched::SystemProcessTable{}));
  if (!sched::enqueue_needed(work) && !work.claimable) return lost;
  auto ticked = TRY(sched::enqueue_due(db, started));
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
