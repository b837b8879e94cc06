#include "sched/outcome.hpp"

#include "store/runs.hpp"
#include "store/tasks.hpp"

namespace taskd::sched {
namespace {

core::Result<void> apply_policy(store::Database& db, const core::Task& task, const AttemptEnd& end, core::Time now) {
  auto schedule = core::schedule_of(task.definition);
  if (!schedule) return std::unexpected(schedule.error());
  auto decision = end.trigger == core::Trigger::manual
                      ? core::on_manual_finish(*schedule, task.state, now, end.outcome, end.reason)
                      : core::on_finish(task.definition, *schedule, task.state, now, end.outcome, end.reason);
  if (auto saved = write_decision(db, task.id, decision.state, decision.skipped, now); !saved) return saved;
  if (end.state_blob) return store::save_state_blob(db, task.id, *end.state_blob);
  return {};
}

}  // namespace

core::Result<bool> record_attempt_end(store::Database& db, const AttemptEnd& end, core::Time now, int history_limit) {
  return store::guarded(db, [&]() -> core::Result<bool> {
    store::WriteTransaction tx(db);
    store::FinishRecord record{end.run_id,    end.attempt_uid, core::run_status_of(end.outcome),
                               now,           end.exit_code,   end.signal,
                               end.reason,    end.output,      end.output_truncated};
    auto finished = store::finish_run(db, record);
    if (!finished) return std::unexpected(finished.error());
    if (auto pruned = store::prune_history(db, end.task_id, history_limit); !pruned)
      return std::unexpected(pruned.error());
    auto task = store::find_task(db, end.task_id);
    if (!task) return std::unexpected(task.error());
    bool is_current = *finished && *task && (*task)->state.attempt_uid == end.attempt_uid;
    if (is_current) {
      if (auto applied = apply_policy(db, **task, end, now); !applied) return std::unexpected(applied.error());
    }
    tx.commit();
    return is_current;
  });
}

core::Result<void> write_decision(store::Database& db, std::int64_t task_id, const core::TaskState& state,
                                  const std::optional<core::SkippedSlots>& skipped, core::Time now) {
  if (skipped) {
    if (auto written = store::insert_skipped_run(db, task_id, *skipped, now); !written) return written;
  }
  return store::save_state(db, task_id, state, now);
}

}  // namespace taskd::sched
