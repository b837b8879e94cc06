#include "sched/tick.hpp"

#include <algorithm>

#include "core/policy.hpp"
#include "store/runs.hpp"
#include "store/tasks.hpp"

namespace taskd::sched {
namespace {

// Applies the enqueue decision for one due task; returns what it wrote and
// adds it to `reports`.
core::Result<TickResult> enqueue_task(store::Database& db, const core::Task& task, core::Time now,
                                      std::vector<RunReport>& reports) {
  TickResult result;
  auto schedule = core::schedule_of(task.definition);
  if (!schedule) return std::unexpected(schedule.error());
  auto active = store::has_active_run(db, task.id);
  if (!active) return std::unexpected(active.error());
  auto decision = core::on_enqueue(task.definition, *schedule, task.state, now, *active);
  if (decision.skipped) {
    if (auto written = store::insert_skipped_run(db, task.id, *decision.skipped, now); !written)
      return std::unexpected(written.error());
    result.skipped = 1;
    reports.emplace_back(0, task.definition.name, core::RunStatus::skipped, decision.skipped->reason);
  }
  if (decision.run_slot) {
    auto queued = store::insert_queued_run(db, task, *decision.run_slot, decision.trigger, now, decision.not_before);
    if (!queued) return std::unexpected(queued.error());
    result.enqueued = 1;
    reports.emplace_back(*queued, task.definition.name, core::RunStatus::queued, "");
  }
  if (auto saved = store::save_state(db, task.id, decision.state, now); !saved) return std::unexpected(saved.error());
  return result;
}

}  // namespace

core::Result<TickResult> enqueue_due(store::Database& db, core::Time now, int batch, const ReportSink& sink) {
  TickResult total;
  while (true) {
    std::vector<RunReport> reports;
    auto batch_result = store::guarded(db, [&]() -> core::Result<int> {
      store::WriteTransaction tx(db);
      auto due = store::due_tasks(db, now, batch);
      if (!due) return std::unexpected(due.error());
      for (const auto& task : *due) {
        auto result = enqueue_task(db, task, now, reports);
        if (!result) return std::unexpected(result.error());
        total.enqueued += result->enqueued;
        total.skipped += result->skipped;
      }
      tx.commit();
      return static_cast<int>(due->size());
    });
    if (!batch_result) return std::unexpected(batch_result.error());
    if (sink) std::ranges::for_each(reports, sink);
    if (*batch_result < batch) return total;
  }
}

}  // namespace taskd::sched
